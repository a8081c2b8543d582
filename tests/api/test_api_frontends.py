"""Frontends on their own origin, through a real `prickle serve`: CORS (`--cors-origins`), GraphQL
over HTTP's media types and status codes, and persisted documents (docs/frontends.md)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from server import Server, module_database, start

LISTED = "http://127.0.0.1:5173"
PATTERN = "https://*.example.com"
GRAPHQL_RESPONSE = "application/graphql-response+json"
SPEC_ACCEPT = f"{GRAPHQL_RESPONSE}, application/json;q=0.9"


MINE = "query Mine { me { id kind } }"
THEIRS = "query Theirs { me { id } }"  # a bare key in the manifest, as relay-compiler writes


def sha256(document: str) -> str:
    return hashlib.sha256(document.encode()).hexdigest()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server listing two origins, with a manifest of two trusted documents."""
    directory = tmp_path_factory.mktemp("frontends")
    manifest = directory / "persisted.json"
    manifest.write_text(json.dumps({f"sha256:{sha256(MINE)}": MINE, sha256(THEIRS): THEIRS}))
    with module_database(directory) as url:
        served = start(
            url,
            directory / "logs",
            "--cors-origins",
            f"{LISTED}, {PATTERN}",
            "--trusted-documents",
            str(manifest),
        )
        try:
            yield served
        finally:
            served.stop()


def preflight(server: Server, origin: str, method: str = "POST", headers: str = "") -> Any:
    asked = {"Origin": origin, "Access-Control-Request-Method": method}
    if headers:
        asked["Access-Control-Request-Headers"] = headers
    return server.client.options(server.graphql_url, headers=asked)


def post(server: Server, body: dict[str, Any], **headers: str) -> httpx.Response:
    sent = {**server.headers(), **headers}
    return server.client.post(server.graphql_url, json=body, headers=sent)


CORS_HEADERS = ("access-control-allow-origin", "access-control-expose-headers")


# CORS


def test_a_listed_origins_preflight_is_answered(server: Server) -> None:
    for origin in (LISTED, "https://app.example.com", "https://a.b.example.com"):
        asked = "authorization, content-type, x-request-id, last-event-id, accept"
        answer = preflight(server, origin, "POST", asked)
        assert answer.status_code == 204, (origin, answer.text)
        assert answer.headers["access-control-allow-origin"] == origin
        assert {"GET", "POST"} <= set(answer.headers["access-control-allow-methods"].split(", "))
        allowed = set(answer.headers["access-control-allow-headers"].split(", "))
        assert set(asked.split(", ")) <= allowed
        assert int(answer.headers["access-control-max-age"]) > 0
        assert "Origin" in answer.headers["vary"]


def test_a_listed_origins_requests_carry_the_cors_headers(server: Server) -> None:
    answer = post(server, {"query": "{ me { id } }"}, Origin="https://app.example.com")
    assert answer.status_code == 200 and answer.json()["data"]["me"]["id"] == "admin"
    assert answer.headers["access-control-allow-origin"] == "https://app.example.com"
    assert answer.headers["access-control-expose-headers"] == "X-Request-ID"
    assert "Origin" in answer.headers["vary"]
    got = server.client.get(
        server.graphql_url, params={"query": "{ me { id } }"}, headers={"Origin": LISTED}
    )
    assert got.headers["access-control-allow-origin"] == LISTED


def test_any_other_origin_gets_no_cors_header_and_its_preflight_is_refused(
    server: Server,
) -> None:
    for origin in (
        "http://127.0.0.1:5174",  # another port
        "https://example.com",  # the pattern's domain itself
        "http://app.example.com",  # another scheme
        "https://app.example.com.evil.org",
        "null",
    ):
        answer = preflight(server, origin)
        assert answer.status_code == 403, (origin, answer.text)
        assert answer.json()["errors"][0]["extensions"]["code"] == "cors_refused"
        assert not any(h in answer.headers for h in CORS_HEADERS)
        plain = post(server, {"query": "{ __typename }"}, Origin=origin)
        assert not any(h in plain.headers for h in CORS_HEADERS), origin
        assert "Origin" in plain.headers["vary"]  # a cache keys on Origin
    # the server's own pages and clients that send no Origin are not concerned
    assert not any(h in post(server, {"query": "{ __typename }"}).headers for h in CORS_HEADERS)
    got = server.client.get(server.graphql_url, params={"query": "{ __typename }"})
    assert "Origin" in got.headers["vary"] and "access-control-allow-origin" not in got.headers


def test_a_preflight_for_a_method_or_header_not_allowed_is_refused(server: Server) -> None:
    for method, headers, named in (
        ("DELETE", "", "DELETE"),
        ("PUT", "content-type", "PUT"),
        ("POST", "authorization, x-secret-header", "x-secret-header"),
    ):
        answer = preflight(server, LISTED, method, headers)
        assert answer.status_code == 403, answer.text
        error = answer.json()["errors"][0]
        assert error["extensions"]["code"] == "cors_refused" and named in error["message"]
        assert "access-control-allow-origin" not in answer.headers


def test_a_preflight_runs_nothing(server: Server) -> None:
    """A refused preflight with a mutation's body is not executed (the agent it would
    register does not exist afterwards)."""
    mutation = 'mutation { register_agent(name: "preflighted") { token } }'
    for origin in (LISTED, "http://evil.test"):
        sent = {"Origin": origin, "Access-Control-Request-Method": "POST"}
        server.client.request("OPTIONS", server.graphql_url, json={"query": mutation}, headers=sent)
    agents = server.data("{ me { id } }")  # the server is up; nothing was registered
    assert agents["me"]["id"] == "admin"
    registered = server.post(mutation)  # registering it now succeeds: it did not exist
    assert not registered.get("errors"), registered


def test_a2a_is_covered_too(server: Server) -> None:
    answer = server.client.options(
        f"{server.base_url}/a2a/admin/anyone",
        headers={"Origin": LISTED, "Access-Control-Request-Method": "POST"},
    )
    assert answer.status_code == 204
    refused = server.client.options(
        f"{server.base_url}/a2a/admin/anyone",
        headers={"Origin": "http://evil.test", "Access-Control-Request-Method": "POST"},
    )
    assert refused.status_code == 403


async def test_a_websocket_from_an_origin_not_listed_is_refused_before_the_upgrade(
    server: Server,
) -> None:
    import websockets
    from websockets.exceptions import InvalidStatus

    async def opens(origin: str | None) -> bool:
        try:
            async with websockets.connect(
                server.ws_url,
                subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
                origin=origin,  # type: ignore[arg-type]
            ):
                return True
        except InvalidStatus as refused:
            assert refused.response.status_code == 403
            return False

    assert await opens(None)  # not a browser
    assert await opens(server.base_url)  # the server's own page
    assert await opens(LISTED)
    assert await opens("https://board.example.com")
    assert not await opens("http://evil.test")
    assert not await opens("https://example.com")


# GraphQL over HTTP


def test_graphql_response_json_is_offered_and_preferred(server: Server) -> None:
    for accept in (SPEC_ACCEPT, GRAPHQL_RESPONSE, f"application/json;q=0.5, {GRAPHQL_RESPONSE}"):
        answer = post(server, {"query": "{ me { id } }"}, Accept=accept)
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"] == f"{GRAPHQL_RESPONSE}; charset=utf-8"
        assert answer.json() == {"data": {"me": {"id": "admin"}}}
    for accept in ("application/json", "*/*", f"application/json, {GRAPHQL_RESPONSE};q=0.5"):
        answer = post(server, {"query": "{ me { id } }"}, Accept=accept)
        assert answer.headers["content-type"] == "application/json", accept


def test_an_event_stream_is_answered_only_where_accept_prefers_it(server: Server) -> None:
    """urql lists the JSON types first and `text/event-stream` after them for queries and
    mutations: it gets JSON. A client that prefers the stream (graphql-sse) gets one."""
    urql = (
        f"{GRAPHQL_RESPONSE}, application/graphql+json, application/json,"
        " text/event-stream, multipart/mixed"
    )
    for accept in (urql, f"text/event-stream;q=0.5, {GRAPHQL_RESPONSE}"):
        answer = post(server, {"query": "{ me { id } }"}, Accept=accept)
        assert answer.headers["content-type"].startswith(GRAPHQL_RESPONSE), accept
        assert answer.json() == {"data": {"me": {"id": "admin"}}}
    for accept in ("text/event-stream", f"text/event-stream, {GRAPHQL_RESPONSE}"):
        answer = post(server, {"query": "{ me { id } }"}, Accept=accept)
        assert answer.headers["content-type"].startswith("text/event-stream"), accept
        assert '"me"' in answer.text


def test_request_errors_are_400_without_data(server: Server) -> None:
    for body, code in (
        ({"query": "{ me { id }"}, "invalid_input"),  # does not parse
        ({"query": "{ me { no_such_field } }"}, "invalid_input"),  # does not validate
        (  # variables that do not coerce
            {"query": "query($id: ID!) { task(id: $id) { id } }", "variables": {"id": None}},
            "invalid_input",
        ),
        ({"query": "{" + "a:__typename " * 40 + "}"}, "query_too_complex"),  # a limit
    ):
        answer = post(server, body, Accept=SPEC_ACCEPT)
        assert answer.status_code == 400, (body, answer.text)
        assert answer.headers["content-type"].startswith(GRAPHQL_RESPONSE)
        result = answer.json()
        assert "data" not in result and result["errors"][0]["extensions"]["code"] == code
        legacy = post(server, body, Accept="application/json")  # the legacy behaviour
        assert legacy.status_code == 200 and legacy.json()["data"] is None


def test_an_answer_with_errors_once_execution_started_is_2xx(server: Server) -> None:
    answer = post(server, {"query": "{ me { id } }"}, Accept=SPEC_ACCEPT, Authorization="")
    assert answer.status_code == 294  # partial success: `data` (null here) and `errors`
    result = answer.json()
    assert "data" in result and result["errors"][0]["extensions"]["code"] == "unauthenticated"


def test_get_queries_work_and_get_mutations_are_refused_405(server: Server) -> None:
    got = server.client.get(
        server.graphql_url,
        params={"query": "{ me { id } }"},
        headers={**server.headers(), "Accept": SPEC_ACCEPT},
    )
    assert got.status_code == 200 and got.json()["data"]["me"]["id"] == "admin"
    mutation = 'mutation { register_agent(name: "by-get") { token } }'
    for accept in (SPEC_ACCEPT, "application/json"):
        refused = server.client.get(
            server.graphql_url,
            params={"query": mutation},
            headers={**server.headers(), "Accept": accept},
        )
        assert refused.status_code == 405 and refused.headers["allow"] == "POST"
        assert refused.json()["errors"][0]["extensions"]["code"] == "invalid_input"
    assert not server.post(mutation).get("errors")  # nothing registered it before


def test_an_accept_the_server_cannot_satisfy_is_406(server: Server) -> None:
    mutation = 'mutation { register_agent(name: "by-406") { token } }'
    for accept in ("text/xml", "application/xml, text/plain", f"{GRAPHQL_RESPONSE};q=0"):
        answer = post(server, {"query": mutation}, Accept=accept)
        assert answer.status_code == 406, (accept, answer.text)
        assert answer.json()["errors"][0]["extensions"]["code"] == "not_acceptable"
    assert not server.post(mutation).get("errors")  # nothing ran


# persisted documents


def run(server: Server, body: dict[str, Any], accept: str = "application/json") -> httpx.Response:
    return post(server, body, Accept=accept)


def code_of(answer: httpx.Response) -> str:
    return str(answer.json()["errors"][0]["extensions"]["code"])


def test_a_trusted_document_is_named_by_document_id_doc_id_or_its_apq_hash(
    server: Server,
) -> None:
    for body in (
        {"documentId": f"sha256:{sha256(MINE)}"},
        {"doc_id": sha256(MINE)},  # Relay's
        {"doc_id": f"sha256:{sha256(THEIRS)}"},
        {"extensions": {"persistedQuery": {"version": 1, "sha256Hash": sha256(MINE)}}},
        {"documentId": f"sha256:{sha256(MINE)}", "query": MINE},  # both, the same document
    ):
        answer = run(server, body)
        assert answer.status_code == 200, (body, answer.text)
        assert answer.json()["data"]["me"]["id"] == "admin", body
    got = server.client.get(
        server.graphql_url,
        params={"documentId": f"sha256:{sha256(MINE)}"},
        headers={**server.headers(), "Accept": SPEC_ACCEPT},
    )
    assert got.status_code == 200 and got.json()["data"]["me"]["kind"] == "person"


def test_automatic_persisted_queries_register_a_document_then_take_its_hash(
    server: Server,
) -> None:
    document = "query Apq { me { id } task_states { name } }"
    hash_only = {"extensions": {"persistedQuery": {"version": 1, "sha256Hash": sha256(document)}}}
    unknown = run(server, hash_only)
    assert unknown.status_code == 200  # Apollo's convention for a legacy client
    error = unknown.json()["errors"][0]
    assert error["message"] == "PersistedQueryNotFound"
    assert error["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"
    assert "data" not in unknown.json()
    assert run(server, hash_only, SPEC_ACCEPT).status_code == 400  # a request error
    registered = run(server, {**hash_only, "query": document})
    assert registered.json()["data"]["me"]["id"] == "admin"
    again = run(server, hash_only)
    assert again.status_code == 200 and again.json()["data"]["me"]["id"] == "admin"
    by_get = server.client.get(  # GET: extensions as a JSON parameter
        server.graphql_url,
        params={"extensions": json.dumps(hash_only["extensions"])},
        headers=server.headers(),
    )
    assert by_get.json()["data"]["me"]["id"] == "admin"


def test_a_document_whose_hash_does_not_match_is_refused_and_nothing_runs(
    server: Server,
) -> None:
    mutation = 'mutation { register_agent(name: "mismatched") { token } }'
    other = sha256("query { me { id } }")
    for body in (
        {"query": mutation, "extensions": {"persistedQuery": {"version": 1, "sha256Hash": other}}},
        {"query": mutation, "documentId": f"sha256:{sha256(MINE)}"},  # another document
        {"query": mutation, "doc_id": other},
    ):
        for accept in ("application/json", SPEC_ACCEPT):
            answer = run(server, body, accept)
            assert answer.status_code == 400, answer.text
            assert code_of(answer) == "persisted_document_mismatch"
            assert "data" not in answer.json()
    assert not server.post(mutation).get("errors")  # it had not run: registering works now


def test_a_malformed_or_unknown_document_id_is_refused(server: Server) -> None:
    for body, code in (
        ({"documentId": "md5:0123"}, "persisted_document_invalid"),
        ({"documentId": "sha256:not-hex"}, "persisted_document_invalid"),
        ({"documentId": 42}, "persisted_document_invalid"),
        ({"doc_id": "abc"}, "persisted_document_invalid"),
        (
            {"extensions": {"persistedQuery": {"version": 2, "sha256Hash": sha256(MINE)}}},
            "persisted_document_invalid",
        ),
        ({"documentId": f"sha256:{'0' * 64}"}, "persisted_document_not_found"),
        ({"doc_id": "f" * 64}, "persisted_document_not_found"),
    ):
        answer = run(server, body)
        assert answer.status_code == 400, (body, answer.text)
        assert code_of(answer) == code, body
