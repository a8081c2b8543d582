// Prickle live board: a project's tasks in columns by state, kept live by the task_events
// subscription over graphql-transport-ws. Plain JavaScript, no build step, nothing fetched
// from anywhere but this server.
"use strict";

(() => {
  // Active states first, in the order work flows; the three final states last.
  const STATES = [
    "requested", "routed", "accepted", "working", "waiting", "verifying", "approval",
    "returned", "completed", "rejected", "cancelled",
  ];
  const TERMINAL = new Set(["completed", "rejected", "cancelled"]);
  const TOKEN_KEY = "prickle.token";
  const PAGE = 500;

  const CARD = `id project state waiting_on assignee requester display_title version
    updated_at parent_task_id packet { task deliverable_type }`;
  const Q_PAGE = `query BoardPage($project: String, $after: String) {
    tasks(project: $project, first: ${PAGE}, after: $after) {
      total_count page_info { has_next_page end_cursor } edges { node { ${CARD} } } } }`;
  const Q_PROBE = `query BoardProbe { tasks(first: 1) { edges { node { id project } } } }`;
  const Q_PROJECTS = `query BoardProjects { tasks(first: 200) { edges { node { project } } } }`;
  const Q_STATES = `query BoardStates { task_states { name description terminal } }`;
  const Q_ME = `query BoardMe { me { kind id } }`;
  const LINK = `id state display_title packet { task }`;
  const Q_DETAIL = `query BoardTask($id: ID!) { task(id: $id) {
    id version allowed_verbs as_protocol
    parent { ${LINK} } children { ${LINK} } dependencies { ${LINK} }
    events { cursor seq kind from_state to_state waiting_on verb actor at note } } }`;
  const S_HEAD = `subscription BoardHead($task_id: ID!) {
    task_events(task_id: $task_id) { cursor } }`;
  const S_EVENTS = `subscription BoardEvents($project: String, $after: String) {
    task_events(project: $project, after: $after) {
      cursor seq kind task_id from_state to_state verb actor at task { ${CARD} } } }`;

  const $ = (id) => document.getElementById(id);

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    if (attrs) for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat(Infinity)) if (c != null && c !== false) el.append(c);
    return el;
  }

  // ---- HTTP GraphQL --------------------------------------------------------------------

  class GraphQLError extends Error {
    constructor(errors) {
      super(errors.map((e) => e.message).join("; "));
      this.errors = errors;
      this.code = errors[0]?.extensions?.code;
    }
  }

  async function gql(token, query, variables = {}) {
    const response = await fetch("/graphql", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    let body;
    try { body = await response.json(); } catch { body = null; }
    if (body?.errors?.length) throw new GraphQLError(body.errors);
    if (!response.ok || !body) {
      const code = response.status === 401 ? "unauthenticated" : "http";
      throw new GraphQLError([{ message: `HTTP ${response.status}`, extensions: { code } }]);
    }
    return body.data;
  }

  // ---- graphql-transport-ws ------------------------------------------------------------

  // One WebSocket carrying any number of subscriptions. On a dropped connection it
  // reconnects with backoff and subscribes again, each subscription computing its
  // variables afresh (so the board resumes `after` its last cursor).
  class Live {
    constructor(token, onStatus, onAuthFailed) {
      this.token = token;
      this.onStatus = onStatus;
      this.onAuthFailed = onAuthFailed;
      this.subs = new Map();
      this.ws = null;
      this.acked = false;
      this.attempt = 0;
      this.holdUntil = 0;
      this.timer = null;
      this.stopped = false;
      this.connections = 0;
      this.lastMessage = 0;
      this.keepalive = setInterval(() => this.checkAlive(), 10000);
    }

    url() {
      return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
    }

    connect() {
      if (this.stopped || this.ws) return;
      clearTimeout(this.timer);
      this.onStatus(this.connections ? "reconnecting" : "connecting");
      const ws = new WebSocket(this.url(), "graphql-transport-ws");
      this.ws = ws;
      this.acked = false;
      ws.onopen = () => {
        this.lastMessage = Date.now();
        this.send({ type: "connection_init", payload: { Authorization: `Bearer ${this.token}` } });
        this.timer = setTimeout(() => { if (!this.acked) this.drop(); }, 10000);
      };
      ws.onmessage = (m) => this.receive(ws, m);
      ws.onclose = (e) => this.closed(ws, e);
    }

    send(message) {
      if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
    }

    receive(ws, message) {
      if (ws !== this.ws) return;
      this.lastMessage = Date.now();
      let m;
      try { m = JSON.parse(message.data); } catch { return this.drop(); }
      const sub = m.id != null ? this.subs.get(m.id) : null;
      switch (m.type) {
        case "connection_ack":
          clearTimeout(this.timer);
          this.acked = true;
          this.attempt = 0;
          this.connections += 1;
          this.onStatus("live");
          for (const [id, s] of this.subs) this.start(id, s);
          break;
        case "ping": this.send({ type: "pong" }); break;
        case "pong": break;
        case "next":
          if (!sub) break;
          if (m.payload?.errors?.length) this.failed(m.id, sub, m.payload.errors);
          else sub.next(m.payload.data);
          break;
        case "error":
          if (sub) this.failed(m.id, sub, m.payload || []);
          break;
        case "complete":
          if (sub) this.ended(m.id, sub);
          break;
      }
    }

    start(id, s) {
      const payload = { query: s.query, variables: s.variables() };
      this.send({ type: "subscribe", id, payload });
    }

    subscribe(id, query, variables, handlers) {
      const s = { query, variables, ...handlers };
      this.subs.set(id, s);
      if (this.acked) this.start(id, s);
      else this.connect();
    }

    unsubscribe(id) {
      if (this.subs.delete(id) && this.acked) this.send({ type: "complete", id });
    }

    failed(id, sub, errors) {
      const auth = errors.some((e) => e?.extensions?.code === "unauthenticated");
      if (auth) return this.authFailed();
      if (sub.error && sub.error(errors) === "stop") return this.unsubscribe(id);
      this.drop();  // e.g. a subscriber that fell behind: resume from its cursor
    }

    ended(id, sub) {
      if (sub.once) { this.subs.delete(id); return; }
      this.drop();  // the server ended a stream that should not end: resume it
    }

    authFailed() {
      this.stop();
      this.onAuthFailed();
    }

    closed(ws, event) {
      if (ws !== this.ws) return;
      this.ws = null;
      this.acked = false;
      clearTimeout(this.timer);
      if (this.stopped) return;
      if (event.code === 4403 || event.code === 4401) return this.authFailed();
      this.onStatus("reconnecting");
      const backoff = Math.min(15000, 500 * 2 ** this.attempt) * (0.5 + Math.random() / 2);
      this.attempt += 1;
      const wait = Math.max(backoff, this.holdUntil - Date.now());
      this.timer = setTimeout(() => this.connect(), wait);
    }

    // Close the socket now; it reconnects by itself (not before `holdMs` have passed).
    drop(holdMs = 0) {
      this.holdUntil = Date.now() + holdMs;
      const ws = this.ws;
      if (!ws) return;
      if (ws.readyState === WebSocket.CONNECTING) ws.onopen = () => ws.close();
      else ws.close(4000, "client dropped the connection");
      // Do not wait for the closing handshake: treat the socket as gone at once.
      this.closed(ws, { code: 4000 });
    }

    checkAlive() {
      if (!this.acked) return;
      if (Date.now() - this.lastMessage > 45000) return this.drop();
      if (Date.now() - this.lastMessage > 20000) this.send({ type: "ping" });
    }

    stop() {
      this.stopped = true;
      clearTimeout(this.timer);
      clearInterval(this.keepalive);
      const ws = this.ws;
      this.ws = null;
      if (ws) ws.close(1000, "bye");
      this.onStatus("idle");
    }
  }

  // ---- the board -----------------------------------------------------------------------

  const metrics = { load: null, render: null, renderFrame: null, applies: [], events: 0 };

  function measure(name, start, detail) {
    performance.mark(`${name}:end`);
    const m = performance.measure(name, { start, end: `${name}:end`, detail });
    return m.duration;
  }

  class Board {
    constructor(root) {
      this.root = root;
      this.columns = new Map();
      this.cards = new Map();   // task id -> { el, task }
      this.pending = new Map(); // task id -> newest task seen, not yet drawn
      this.frame = 0;
      this.ready = false;
      this.selected = null;
      this.onChange = () => {};
      this.build();
    }

    build() {
      const columns = STATES.map((state) => {
        const count = h("span", { class: "n", text: "0" });
        const list = h("ol", { class: "cards", "data-state": state });
        const col = h("section", {
          class: `column${TERMINAL.has(state) ? " terminal" : ""}`, "data-state": state,
        }, h("h2", null, h("span", { text: state }), count), list);
        this.columns.set(state, { col, list, count, n: 0 });
        return col;
      });
      this.root.replaceChildren(...columns);
    }

    describe(states) {
      for (const s of states) {
        const c = this.columns.get(s.name);
        if (c) c.col.title = s.description;
      }
    }

    clear() {
      this.cards.clear();
      this.pending.clear();
      this.ready = false;
      for (const c of this.columns.values()) { c.list.replaceChildren(); this.count(c, -c.n); }
    }

    count(column, delta) {
      column.n += delta;
      column.count.textContent = String(column.n);
    }

    card(task) {
      const title = task.display_title || task.packet?.task || task.id;
      const meta = h("div", { class: "m" },
        h("span", { class: "tag", text: task.packet?.deliverable_type }),
        h("span", { text: task.assignee }),
        task.waiting_on && h("span", { class: "tag wait", text: `on ${task.waiting_on}` }),
        h("span", { text: `v${task.version}` }));
      const el = h("li", {
        class: "card", tabindex: "0", "data-id": task.id, "data-state": task.state,
        "data-version": String(task.version), title: task.packet?.task,
      }, h("div", { class: "t", text: title }), meta);
      if (task.id === this.selected) el.classList.add("selected");
      return el;
    }

    // The first page: every column drawn in one go, newest activity first.
    render(tasks) {
      performance.mark("board:render:start");
      this.cards.clear();
      const sorted = [...tasks].sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1));
      const frags = new Map(STATES.map((s) => [s, document.createDocumentFragment()]));
      const counts = new Map(STATES.map((s) => [s, 0]));
      for (const task of sorted) {
        const el = this.card(task);
        this.cards.set(task.id, { el, task });
        frags.get(task.state).append(el);
        counts.set(task.state, counts.get(task.state) + 1);
      }
      for (const [state, c] of this.columns) {
        c.list.replaceChildren(frags.get(state));
        this.count(c, counts.get(state) - c.n);
      }
      void this.root.offsetHeight; // include style and layout in the measure
      const ms = measure("board:render", "board:render:start", { tasks: tasks.length });
      metrics.render = { tasks: tasks.length, ms };
      requestAnimationFrame(() => setTimeout(() => {
        metrics.renderFrame = { tasks: tasks.length, ms: measure("board:render-frame", "board:render:start") };
      }));
      this.ready = true;
      this.schedule();
      this.onChange();
    }

    // Events and later pages: kept by task id, newest version wins, drawn once per frame.
    offer(task) {
      const known = this.pending.get(task.id) || this.cards.get(task.id)?.task;
      if (known && known.version >= task.version) return;
      this.pending.set(task.id, task);
      this.schedule();
    }

    schedule() {
      if (!this.ready || this.frame || !this.pending.size) return;
      this.frame = requestAnimationFrame(() => { this.frame = 0; this.flush(); });
    }

    flush() {
      performance.mark("board:apply:start");
      const batch = [...this.pending.values()];
      this.pending.clear();
      for (const task of batch) this.apply(task);
      void this.root.offsetHeight;
      const ms = measure("board:apply", "board:apply:start", { tasks: batch.length });
      metrics.applies.push({ tasks: batch.length, ms });
      if (metrics.applies.length > 200) metrics.applies.shift();
      this.onChange(batch);
    }

    // One card: replaced by its new version at the top of its (possibly new) column.
    apply(task) {
      const old = this.cards.get(task.id);
      if (old && old.task.version >= task.version) return;
      const el = this.card(task);
      const column = this.columns.get(task.state);
      if (old) {
        old.el.remove();
        this.count(this.columns.get(old.task.state), -1);
      }
      if (!column) return;
      column.list.prepend(el);
      this.count(column, 1);
      el.classList.add("fresh");
      this.cards.set(task.id, { el, task });
    }

    select(id) {
      if (id === this.selected) return;
      this.cards.get(this.selected)?.el.classList.remove("selected");
      this.selected = id;
      const el = this.cards.get(id)?.el;
      if (!el) return;
      el.classList.add("selected");
      requestAnimationFrame(() => el.scrollIntoView({ block: "nearest", inline: "nearest" }));
    }
  }

  // ---- the detail panel ----------------------------------------------------------------

  const text = (v) => (v == null ? "—" : typeof v === "object" ? JSON.stringify(v) : String(v));
  const who = (ref) => ref && (ref.handle || ref.agent_id || ref.kind);

  function list(items, tag = "ul", each = (x) => text(x)) {
    if (!items || !items.length) return h("p", { class: "muted", text: "none" });
    return h(tag, null, items.map((x, i) => h("li", null, each(x, i))));
  }

  function fields(pairs) {
    return h("dl", null, pairs.filter(([, v]) => v !== undefined)
      .map(([k, v]) => [h("dt", { text: k }), h("dd", null, v instanceof Node ? v : text(v))]));
  }

  function pre(value) {
    return value ? h("pre", { text: value }) : h("span", { class: "muted", text: "—" });
  }

  // Evidence urls are only links when they are web addresses; anything else stays text.
  function webLink(url) {
    let ok = false;
    try { ok = ["http:", "https:"].includes(new URL(url).protocol); } catch { ok = false; }
    return ok ? h("a", { href: url, rel: "noreferrer noopener", target: "_blank", text: url })
      : h("span", { text: url });
  }

  function criteriaSection(t) {
    const report = t.result?.evidence_report;
    const verdicts = new Map((t.result?.verdicts || []).map((v) => [v.criterion, v]));
    return list(t.packet.acceptance_criteria, "ol", (c, i) => {
      const cov = report?.coverage?.find((x) => x.criterion === i);
      const bits = [h("span", { text: c })];
      if (report) {
        const uncovered = report.uncovered?.includes(i);
        bits.push(" ", h("span", {
          class: `tag ${uncovered ? "bad" : "ok"}`,
          text: uncovered ? "uncovered" : `evidence ${cov?.evidence?.map((e) => `#${e}`).join(" ")}`,
        }));
      }
      const v = verdicts.get(i);
      if (v) bits.push(" ", h("span", {
        class: `tag ${v.accepted ? "ok" : "bad"}`, text: v.accepted ? "accepted" : "not accepted",
      }), v.note ? ` ${v.note}` : "");
      return bits;
    });
  }

  function checkpointSection(t) {
    const c = t.latest_checkpoint;
    if (!c) return h("p", { class: "muted", text: "no checkpoint yet" });
    const by = t.latest_checkpoint_by;
    return [
      fields([
        ["by", by ? `${by.agent} (${by.provenance}${by.handed_back ? ", handed back" : ""})` : null],
        ["needs answer", c.needs_answer ? "yes" : "no"],
      ]),
      pre(c.progress),
      h("div", null, h("strong", { text: "Decisions" }), list(c.decisions)),
      h("div", null, h("strong", { text: "Next steps" }), list(c.next_steps)),
      h("div", null, h("strong", { text: "Open questions" }), list(c.open_questions)),
      h("div", null, h("strong", { text: "Files touched" }), list(c.files_touched)),
    ];
  }

  function resultSection(t) {
    const r = t.result;
    if (!r) return h("p", { class: "muted", text: "no result yet" });
    const report = r.evidence_report || {};
    const stale = new Map((report.stale || []).map((s) => [s.evidence, s.why]));
    return [
      fields([
        ["status", h("span", { class: `tag ${r.status === "accepted" ? "ok" : r.status === "rejected" ? "bad" : ""}`, text: r.status })],
        ["revision", r.revision], ["returned", `${text(r.returned_by)} at ${text(r.returned_at)}`],
        ["provenance", `${r.provenance}, ${text(r.provenance_status)}`],
        ["decided by", r.decided_by ? `${who(r.decided_by)}${r.decided_by_policy ? ` (${r.decided_by_policy})` : ""}` : null],
        ["reason", r.reason || undefined],
        ["lineage", r.lineage ? r.lineage.cause?.kind + (r.lineage.cause?.task_id ? ` ${r.lineage.cause.task_id}` : "") : undefined],
      ]),
      pre(r.summary),
      h("strong", { text: "Evidence" }),
      list(r.evidence, "ol", (e, i) => [
        h("span", { class: "tag", text: e.kind }), " ", e.summary,
        e.criteria?.length ? h("span", { class: "muted", text: ` → criteria ${e.criteria.join(", ")}` }) : "",
        stale.has(i) ? [" ", h("span", { class: "tag bad", text: `stale: ${stale.get(i)}` })] : "",
        e.url ? h("div", null, webLink(e.url)) : "",
        e.observed_at ? h("div", { class: "muted", text: `observed ${e.observed_at}${e.verifier ? ` by ${e.verifier}` : ""}` }) : "",
        e.content ? pre(e.content) : "",
      ].filter((x) => x !== "")),
      h("strong", { text: "Evidence report" }),
      fields([
        ["complete", h("span", { class: `tag ${report.complete ? "ok" : "bad"}`, text: report.complete ? "complete" : "incomplete" })],
        ["uncovered", report.uncovered?.length ? report.uncovered.map((i) => `criterion ${i}`).join(", ") : "none"],
        ["stale", report.stale?.length ? report.stale.map((s) => `#${s.evidence} (${s.why})`).join(", ") : "none"],
        ["general", report.general?.length ? report.general.map((i) => `#${i}`).join(", ") : "none"],
      ]),
      r.artifacts?.length ? [h("strong", { text: "Artifacts" }), list(r.artifacts, "ol", (a) => a.ref)] : null,
    ];
  }

  function eventsSection(events) {
    return list(events, "ol", (e) => h("span", null,
      h("span", { class: "muted", text: `#${e.seq} ${e.at} ` }),
      h("strong", { text: e.kind }), " ",
      e.from_state ? `${e.from_state} → ${e.to_state}` : e.to_state,
      e.waiting_on ? ` (on ${e.waiting_on})` : "",
      e.verb ? ` · ${e.verb}` : "", ` by ${e.actor || "the server"}`,
      e.note ? h("span", { class: "muted", text: ` — ${e.note}` }) : ""));
  }

  function detailView(data, open) {
    const t = data.as_protocol;
    const href = (id) => `?${new URLSearchParams({ project: t.project, task: id })}`;
    const link = (x) => h("a", { "data-open": x.id, href: href(x.id), text: `${x.display_title || x.packet?.task || x.id}` },
      " ", h("span", { class: "tag", text: x.state }));
    const links = (xs) => (xs?.length ? h("ul", null, xs.map((x) => h("li", null, link(x))))
      : h("p", { class: "muted", text: "none" }));
    const body = [
      h("h2", { text: t.display_title || t.packet.task }),
      window.PrickleGraph && h("button", { type: "button", class: "graph-open", text: "Graph", onclick: () => window.PrickleGraph.open(t.id, { token: app.token, onOpen: open }) }),
      h("p", null, h("span", { class: "tag", text: t.state }),
        t.waiting_on ? [" ", h("span", { class: "tag wait", text: `waiting on ${t.waiting_on}` })] : "",
        h("span", { class: "muted", text: ` ${t.id} · v${data.version}` })),
      fields([
        ["project", t.project], ["assignee", t.assignee], ["requester", t.requester || "—"],
        ["requested by", who(t.requested_by)], ["route", t.route?.via + (t.route?.capability ? ` ${t.route.capability.kind}:${t.route.capability.name}` : "")],
        ["turn budget", t.turn_budget ?? "unlimited"], ["created", t.created_at], ["updated", t.updated_at],
        ["viewer may", data.allowed_verbs?.length ? data.allowed_verbs.join(", ") : "nothing"],
      ]),
      h("h3", { text: "Packet" }),
      fields([["deliverable", t.packet.deliverable_type]]),
      pre(t.packet.task),
      t.packet.context ? [h("strong", { text: "Context" }), pre(t.packet.context)] : null,
      t.packet.files?.length ? [h("strong", { text: "Files" }), list(t.packet.files)] : null,
      t.packet.depends_on?.length ? [h("strong", { text: "Depends on" }), list(t.packet.depends_on)] : null,
      h("h3", { text: "Acceptance criteria" }), criteriaSection(t),
      h("h3", { text: "Latest checkpoint" }), checkpointSection(t),
      h("h3", { text: "Result" }), resultSection(t),
      h("h3", { text: "Parent" }), data.parent ? h("p", null, link(data.parent)) : h("p", { class: "muted", text: t.parent_task_id ? `${t.parent_task_id} (not visible)` : "none" }),
      h("h3", { text: "Children" }), links(data.children),
      h("h3", { text: "Dependencies" }), links(data.dependencies),
      h("h3", { text: "Events" }), h("div", { class: "events" }, eventsSection(data.events)),
    ];
    const root = h("div", { "data-task": t.id, "data-state": t.state, "data-version": String(data.version) }, body);
    root.addEventListener("click", (e) => {
      const id = e.target.closest("[data-open]")?.dataset.open;
      if (!id || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      open(id);
    });
    return root;
  }

  // ---- the page ------------------------------------------------------------------------

  const app = {
    token: sessionStorage.getItem(TOKEN_KEY),
    project: new URLSearchParams(location.search).get("project") || "",
    board: null,
    live: null,
    cursor: null,
    openId: null,
    refresh: 0,
    loadId: 0,
  };

  function status(state) {
    const el = $("live");
    el.dataset.state = state;
    el.textContent = state;
  }

  function notice(message, error = false) {
    const el = $("notice");
    el.hidden = !message;
    el.textContent = message || "";
    el.classList.toggle("error", error);
  }

  function updateCount() {
    $("count").textContent = app.board.ready ? `${app.board.cards.size} tasks` : "";
  }

  function setUrl(params) {
    const url = new URL(location.href);
    for (const [k, v] of Object.entries(params)) {
      if (v) url.searchParams.set(k, v); else url.searchParams.delete(k);
    }
    history.replaceState(null, "", url);
  }

  function askToken(message) {
    const dialog = $("token-dialog");
    $("token-error").hidden = !message;
    $("token-error").textContent = message || "";
    $("token").value = "";
    if (!dialog.open) dialog.showModal();
  }

  function authFailed() {
    stopLive();
    sessionStorage.removeItem(TOKEN_KEY);
    app.token = null;
    $("sign-out").hidden = true;
    status("offline");
    askToken("The server did not accept this token. Enter another one.");
  }

  function stopLive() {
    app.live?.stop();
    app.live = null;
  }

  async function signIn(token) {
    try {
      await gql(token, Q_ME);
    } catch (error) {
      const message = error.code === "unauthenticated" ? "The server did not accept this token."
        : `Could not reach the server: ${error.message}`;
      return askToken(message);
    }
    sessionStorage.setItem(TOKEN_KEY, token);
    app.token = token;
    $("token-dialog").close();
    $("sign-out").hidden = false;
    start();
  }

  function start() {
    gql(app.token, Q_STATES).then((d) => app.board.describe(d.task_states)).catch(() => {});
    if (!app.project) {
      notice("Choose a project to see its board.");
      suggestProjects();
      $("project").focus();
      return;
    }
    load(app.project);
  }

  async function suggestProjects() {
    try {
      const data = await gql(app.token, Q_PROJECTS);
      const names = [...new Set(data.tasks.edges.map((e) => e.node.project))].sort();
      $("projects").replaceChildren(...names.map((n) => h("option", { value: n })));
    } catch { /* suggestions are a convenience */ }
  }

  // The cursor to stream from: the log position before the tasks are read, taken from a
  // snapshot event (its cursor is the last committed event), so nothing falls between
  // the query and the subscription. Merging by version makes any overlap harmless.
  function headCursor(live) {
    return new Promise((resolve, reject) => {
      gql(app.token, Q_PROBE).then((data) => {
        const any = data.tasks.edges[0]?.node;
        if (!any) return resolve("0");
        live.subscribe("head", S_HEAD, () => ({ task_id: any.id }), {
          once: true,
          next: (d) => { live.unsubscribe("head"); resolve(d.task_events.cursor); },
          error: (errors) => { reject(new GraphQLError(errors)); return "stop"; },
        });
      }, reject);
    });
  }

  async function load(project) {
    const loadId = ++app.loadId;
    stopLive();
    closeDetail();
    app.board.clear();
    app.cursor = null;
    updateCount();
    notice(`Loading ${project}…`);
    performance.mark("board:load:start");
    const live = new Live(app.token, status, authFailed);
    app.live = live;
    try {
      app.cursor = await headCursor(live);
      if (loadId !== app.loadId) return;
      live.subscribe("board", S_EVENTS, () => ({ project, after: app.cursor }), {
        next: (data) => onEvent(data.task_events),
        error: (errors) => notice(`Live updates interrupted (${errors[0]?.message}); resuming…`, true),
      });
      let after = null;
      let first = true;
      do {
        const data = await gql(app.token, Q_PAGE, { project, after });
        if (loadId !== app.loadId) return;
        const page = data.tasks;
        const tasks = page.edges.map((e) => e.node);
        if (first) {
          app.board.render(tasks);
          metrics.load = { tasks: tasks.length, ms: measure("board:load", "board:load:start") };
        } else tasks.forEach((t) => app.board.offer(t));
        first = false;
        after = page.page_info.has_next_page ? page.page_info.end_cursor : null;
      } while (after);
      notice(app.board.cards.size ? "" : `No tasks in ${project} yet; new ones appear here live.`);
      const wanted = new URLSearchParams(location.search).get("task");
      if (wanted) openDetail(wanted);
    } catch (error) {
      if (loadId !== app.loadId) return;
      if (error.code === "unauthenticated") return authFailed();
      notice(`Could not load the board: ${error.message}`, true);
    }
  }

  function onEvent(event) {
    if (!$("notice").hidden && $("notice").classList.contains("error")) notice("");
    metrics.events += 1;
    app.cursor = event.cursor;
    if (event.task) app.board.offer(event.task);
    if (event.task_id === app.openId) {
      clearTimeout(app.refresh);
      app.refresh = setTimeout(() => openDetail(app.openId, true), 250);
    }
  }

  async function openDetail(id, quiet = false) {
    app.openId = id;
    app.board.select(id);
    setUrl({ task: id });
    const panel = $("detail");
    panel.hidden = false;
    if (!quiet) $("detail-body").replaceChildren(h("p", { class: "muted", text: "Loading…" }));
    try {
      const data = await gql(app.token, Q_DETAIL, { id });
      if (app.openId !== id) return;
      if (!data.task) {
        return $("detail-body").replaceChildren(h("p", { class: "muted", text: `No visible task ${id}.` }));
      }
      $("detail-body").replaceChildren(detailView(data.task, (next) => openDetail(next)));
    } catch (error) {
      if (error.code === "unauthenticated") return authFailed();
      $("detail-body").replaceChildren(h("p", { class: "error", text: error.message }));
    }
  }

  function closeDetail() {
    app.openId = null;
    if (app.board) app.board.select(null);
    $("detail").hidden = true;
    setUrl({ task: null });
  }

  function init() {
    app.board = new Board($("board"));
    app.board.onChange = updateCount;
    $("project").value = app.project;
    $("board").addEventListener("click", (e) => {
      const card = e.target.closest(".card");
      if (card) openDetail(card.dataset.id);
    });
    $("board").addEventListener("keydown", (e) => {
      const card = e.target.closest(".card");
      if (card && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); openDetail(card.dataset.id); }
    });
    $("detail-close").addEventListener("click", closeDetail);
    document.addEventListener("keydown", (e) => { if (e.key === "Escape" && app.openId) closeDetail(); });
    $("project-form").addEventListener("submit", (e) => {
      e.preventDefault();
      app.project = $("project").value.trim();
      setUrl({ project: app.project, task: null });
      if (app.token && app.project) { notice(""); load(app.project); }
    });
    $("token-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const token = $("token").value.trim();
      if (token) signIn(token);
    });
    $("token-dialog").addEventListener("cancel", (e) => e.preventDefault());
    $("sign-out").addEventListener("click", () => {
      stopLive();
      sessionStorage.removeItem(TOKEN_KEY);
      app.token = null;
      app.board.clear();
      closeDetail();
      updateCount();
      $("sign-out").hidden = true;
      askToken();
    });
    if (app.token) { $("sign-out").hidden = false; start(); } else askToken();
  }

  // A small hook for tests and for debugging from the console.
  window.prickleBoard = {
    metrics,
    get cursor() { return app.cursor; },
    get status() { return $("live").dataset.state; },
    get connections() { return app.live?.connections ?? 0; },
    get size() { return app.board?.cards.size ?? 0; },
    stateOf: (id) => app.board?.cards.get(id)?.task.state ?? null,
    dropConnection: (holdMs = 0) => app.live?.drop(holdMs),
    open: (id) => openDetail(id),
  };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
