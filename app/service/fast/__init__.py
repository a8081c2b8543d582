"""The service's side of the API's fast paths: the compiled page of tasks, in a read
transaction. Taken only while the API's fast paths are (app/api/fast)."""
