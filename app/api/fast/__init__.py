"""The API's fast paths: compiled pages and mutations, shared subscription results, events
sent past Strawberry's stream. Each is taken only while `PRICKLE_FAST_PATHS` is on and its
compat check passes (app/compat); the plain path gives the same answers without it."""
