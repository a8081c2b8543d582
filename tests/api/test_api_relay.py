"""Relay's shape on a real server: every connection pages forward (`first`/`after`) and
backward (`last`/`before`) with `pageInfo`, the old snake_case names answer the same, and
`node`/`nodes` refetch an object by its id alone under the reads' visibility
(docs/frontends.md, Relay)."""

from __future__ import annotations

from typing import Any

from server import Server, persons

PACKET = {"task": "Page me", "deliverable_type": "code", "acceptance_criteria": ["paged"]}
HANDOFF = "mutation($input: HandoffInput!) { handoff(input: $input) { id state waiting_on } }"
INFO = "pageInfo { hasNextPage hasPreviousPage startCursor endCursor }"
OLD = "page_info { has_next_page end_cursor }"


def _cast(server: Server, owner: str, assignee_owner: str, rule: str) -> dict[str, str]:
    """Tokens for two persons and an agent of each; the assignee's owner's gate has `rule`
    for the requester's owner."""
    tokens = persons(server, owner, assignee_owner)
    tokens["planner"] = server.register(tokens[owner], "planner")
    tokens["coder"] = server.register(tokens[assignee_owner], "coder")
    rule = f'{{effect: {rule}, requester_owner: "{owner}"}}'
    gate = f"mutation {{ set_gate_rule(input: {rule}) {{ id }} }}"
    server.data(gate, token=tokens[assignee_owner])
    return tokens


def _hand_off(server: Server, tokens: dict[str, str], assignee: str, n: int) -> list[str]:
    made = []
    for _ in range(n):
        handoff = {"project": "relay", "assignee": assignee, "packet": PACKET}
        made.append(server.data(HANDOFF, {"input": handoff}, tokens["planner"])["handoff"]["id"])
    return made


def _page(server: Server, field: str, args: str, token: str) -> dict[str, Any]:
    query = f"{{ {field}({args}) {{ edges {{ cursor node {{ __typename }} }} {INFO} {OLD} }} }}"
    page: dict[str, Any] = server.data(query, token=token)[field]
    return page


def _all_pages(server: Server, field: str, scope: str, token: str, size: int) -> list[str]:
    """Every cursor, read forward a page at a time, then backward; both reads agree."""
    forward: list[str] = []
    after = ""
    while True:
        page = _page(server, field, f"{scope} first: {size} {after}", token)
        info, old = page["pageInfo"], page["page_info"]
        cursors = [e["cursor"] for e in page["edges"]]
        assert (old["has_next_page"], old["end_cursor"]) == (info["hasNextPage"], info["endCursor"])
        assert info["hasPreviousPage"] == bool(forward)  # `after` was given
        assert (info["startCursor"], info["endCursor"]) == _ends(cursors)
        forward += cursors
        if not info["hasNextPage"]:
            break
        after = f'after: "{info["endCursor"]}"'
    backward: list[str] = []
    before = ""
    while True:
        page = _page(server, field, f"{scope} last: {size} {before}", token)
        info = page["pageInfo"]
        cursors = [e["cursor"] for e in page["edges"]]
        assert len(cursors) <= size and cursors == sorted(cursors, key=_order)
        assert info["hasNextPage"] == bool(backward)  # `before` was given
        assert (info["startCursor"], info["endCursor"]) == _ends(cursors)
        backward = cursors + backward
        if not info["hasPreviousPage"]:
            break
        before = f'before: "{info["startCursor"]}"'
    assert backward == forward
    return forward


def _ends(cursors: list[str]) -> tuple[str | None, str | None]:
    return (cursors[0], cursors[-1]) if cursors else (None, None)


def _order(cursor: str) -> Any:
    return int(cursor) if cursor.isdigit() else cursor


def test_tasks_and_task_events_page_forward_and_backward(api_server: Server) -> None:
    tokens = _cast(api_server, "rhea", "remo", "allow")
    made = _hand_off(api_server, tokens, "remo/coder", 7)
    rhea = tokens["rhea"]
    assert _all_pages(api_server, "tasks", 'project: "relay",', rhea, 3) == made
    events = _all_pages(api_server, "task_events", 'project: "relay",', rhea, 4)
    assert len(events) == 14  # created and routed, each task
    one = _all_pages(api_server, "task_events", f'task_id: "{made[2]}",', rhea, 1)
    assert len(one) == 2
    # a range: after one cursor and before another, from either end
    between = f'project: "relay", after: "{made[1]}", before: "{made[5]}",'
    assert [
        e["cursor"] for e in _page(api_server, "tasks", f"{between} first: 2", rhea)["edges"]
    ] == made[2:4]
    assert [
        e["cursor"] for e in _page(api_server, "tasks", f"{between} last: 2", rhea)["edges"]
    ] == made[3:5]
    # neither first nor last (nor an explicit null): the first 50
    assert len(_page(api_server, "tasks", 'project: "relay", first: null', rhea)["edges"]) == 7


def test_the_inbox_pages_backward(api_server: Server) -> None:
    tokens = _cast(api_server, "iris", "ivan", "hold")
    made = _hand_off(api_server, tokens, "ivan/coder", 5)

    def ids(scope: str, who: str) -> list[str]:  # a cursor is `<moved_at>|<task id>`
        return [c.split("|")[1] for c in _all_pages(api_server, "inbox", scope, tokens[who], 2)]

    assert ids("", "ivan") == made  # held one after another: the oldest waiting first
    assert ids('asked: approve_handoff, project: "relay",', "ivan") == made
    assert ids("asked: decide_result,", "ivan") == ids('project: "elsewhere",', "ivan") == []
    assert ids("", "iris") == []


def test_node_refetches_what_the_reads_show_and_nothing_else(api_server: Server) -> None:
    tokens = _cast(api_server, "nora", "ned", "allow")
    [task] = _hand_off(api_server, tokens, "ned/coder", 1)
    outsider = persons(api_server, "otto")["otto"]
    schedule = {"project": "relay", "assignee": "ned/coder", "packet": PACKET, "cron": "0 9 * * *"}
    made = api_server.run_data("mutations/create_schedule", {"input": schedule}, tokens["nora"])
    schedule_id = made["create_schedule"]["id"]
    query = """query($id: ID!, $ids: [ID!]!) {
      node(id: $id) { __typename id ... on Task { state } }
      nodes(ids: $ids) { __typename id } }"""
    ids = [task, schedule_id, "nora", "ned/coder", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]

    def ask(token: str) -> dict[str, Any]:
        return api_server.data(query, {"id": task, "ids": ids}, token)

    seen = ask(tokens["nora"])
    assert seen["node"] == {"__typename": "Task", "id": task, "state": "routed"}
    assert seen["nodes"] == [
        {"__typename": "Task", "id": task},
        {"__typename": "Schedule", "id": schedule_id},
        {"__typename": "PrincipalInfo", "id": "nora"},
        {"__typename": "PrincipalInfo", "id": "ned/coder"},
        None,
    ]
    # another owner sees neither the task nor the schedule: null, as for an unknown id
    hidden = ask(outsider)
    assert hidden["node"] is None
    assert [n and n["__typename"] for n in hidden["nodes"]] == [
        None,
        None,
        "PrincipalInfo",
        "PrincipalInfo",
        None,
    ]
    assert ask(tokens["coder"])["node"]["id"] == task  # the assignee sees its task


def test_bad_paging_and_node_ids_are_refused_with_a_code(api_server: Server) -> None:
    token = persons(api_server, "bea")["bea"]
    refusals = {
        "{ tasks(first: 1, last: 1) { total_count } }": "first, last: give one of them",
        "{ inbox(last: -1) { total_count } }": "last: must be between 0 and 500",
        "{ task_events(first: 501) { total_count } }": "first: must be between 0 and 500",
        '{ tasks(before: "YXJyYXk6MA==") { total_count } }': "before:",
        '{ task_events(before: "x1") { total_count } }': "before: 'x1' is not an event cursor",
        '{ inbox(after: "x1") { total_count } }': "after: 'x1' is not an inbox cursor",
        '{ node(id: "a b") { id } }': "is no node's id",
        '{ node(id: "remote_agent:nobody") { id } }': "is no node's id",
        "{ nodes(ids: [" + ", ".join(['"bea"'] * 101) + "]) { id } }": "ids: at most 100",
    }
    for query, message in refusals.items():
        error = api_server.error(query, token=token)
        assert error["extensions"]["code"] == "invalid_input", (query, error)
        assert message in error["message"], (query, error)
