package pgtest

// credential is the unprivileged user initdb and postgres run as when the tests run as
// root.
type credential struct {
	uid, gid int
}
