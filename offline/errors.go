package offline

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// apiError is the body of an OpenAI error response, {"error":{...}}; see
// https://platform.openai.com/docs/guides/error-codes. go-openai decodes it into
// *openai.APIError.
type apiError struct {
	Error apiErrorDetail `json:"error"`
}

// apiErrorDetail is the inner object of an apiError.
type apiErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"` // null unless requestError names one
	Code    *string `json:"code"`  // null where OpenAI answers null
}

// errorKinds maps a status to OpenAI's error type and code where they differ from the
// defaults chosen by errorKind.
var errorKinds = map[int][2]string{
	http.StatusUnauthorized:        {"invalid_request_error", "invalid_api_key"},
	http.StatusForbidden:           {"permission_error", "permission_denied"},
	http.StatusNotFound:            {"invalid_request_error", "unknown_url"},
	http.StatusTooManyRequests:     {"requests", "rate_limit_exceeded"},
	http.StatusInternalServerError: {"server_error", "server_error"},
}

// errorKind is the OpenAI error type and code for status: a table entry, else
// "server_error" for 5xx and "invalid_request_error" otherwise, with the status text in
// snake_case as the code.
func errorKind(status int) (typ, code string) {
	if k, ok := errorKinds[status]; ok {
		return k[0], k[1]
	}
	code = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	if code == "" {
		code = "http_" + strconv.Itoa(status)
	}
	if status >= 500 {
		return "server_error", code
	}
	return "invalid_request_error", code
}

// writeError answers status with an OpenAI-style JSON error body. An empty message means
// http.StatusText(status); retryAfter > 0 sets the Retry-After header, in seconds.
func writeError(w http.ResponseWriter, status int, message string, retryAfter int) {
	if message == "" {
		message = http.StatusText(status)
	}
	typ, code := errorKind(status)
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	writeJSON(w, status, apiError{Error: apiErrorDetail{Message: message, Type: typ, Code: &code}})
}

// writeJSON answers status with v encoded as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil { // only our own types are encoded here; this is a programming error
		http.Error(w, `{"error":{"message":"offline: encode response","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
