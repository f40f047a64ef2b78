package workflows

// versionStubbedCallIDs: a call id used by a message whose body is in the message store
// counts as used (uniqueCallIDs); before, only the ids of bodies in the workflow did.
const versionStubbedCallIDs = "stubbed-call-ids"

// versionRenamedCallIDsChecked: a call id renamed to "<replyId>#<n>" is checked again
// (used in the history, run under other arguments in a turn taken back, in callIDs)
// and renamed on until it is free; before, it was taken as it came, and a retried
// turn's reply, which has the same replyId, could run another call under the id of
// one that ran before.
const versionRenamedCallIDsChecked = "renamed-call-ids-checked"
