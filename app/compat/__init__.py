"""Where the server touches another library's private internals: one module per library.

Each module checks, once, that what it relies on is there (`usable()`); where it is not (a
version the fast paths were not written for), the server logs one warning naming the library
and its version and runs the plain path, on the library's public API only.
"""
