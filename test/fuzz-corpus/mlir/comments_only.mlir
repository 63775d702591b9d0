// nothing here
// -----
