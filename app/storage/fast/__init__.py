"""The storage's fast paths: statements sent straight to the driver, grouped SQLite commits,
kept PostgreSQL connections, compiled pages. Each is taken only while `PRICKLE_FAST_PATHS`
is on and its compat check passes (app/compat); the plain path beside it gives the same
answers without it."""
