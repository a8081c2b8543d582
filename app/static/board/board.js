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
  // The gate and the result policy pass a task through these within the call that enters
  // them: they never hold one between calls. (Any empty column is drawn as a narrow strip,
  // so the columns that hold tasks get the width.)
  const PASSING = new Set(["requested", "verifying"]);
  const TOKEN_KEY = "prickle.token";
  const PAGE = 500;
  const SHORT_TITLE = 24; // characters: a shorter title fits three lines of any card
  // States in which a task waits for someone to act: its card says for how long.
  const WAITS = new Set(["routed", "waiting", "approval", "returned"]);
  // Liveness: a ping after 1 s without a word from the server; 2.5 s without one (no pong)
  // and the connection counts as lost, so the board says so within 3 s.
  const PING_AFTER_MS = 1000;
  const LOST_AFTER_MS = 2500;

  const CARD = `id project state waiting_on assignee requester display_title version
    created_at updated_at parent_task_id packet { task deliverable_type }`;
  // What an event says of a move: enough to tell what the task's wait asks (askedOf).
  const ASKED = "kind verb from_state to_state waiting_on actor at note version";
  const Q_PAGE = `query BoardPage($project: String, $after: String) {
    tasks(project: $project, first: ${PAGE}, after: $after) {
      total_count pageInfo { hasNextPage endCursor } edges { node { ${CARD} } } } }`;
  // The first screen: each column's newest COLUMN_PAGE tasks (by creation) and its count, in
  // one request; a column's next page is read when it is scrolled to its end ("Show more").
  // A project of at most WHOLE tasks (no column past the server's count cap) is then read
  // whole, so that Find sees all of it; a larger one stays a page a column until scrolled.
  const COLUMN_PAGE = 30;
  const WHOLE = 2000;
  const COLUMN = `total_count total_count_capped pageInfo { hasPreviousPage startCursor }
      edges { node { ${CARD} } }`;
  // `event_head`: the event cursor the counts are as of (read in the same transaction), and
  // `events_seen_after_head`, the events after it already in them (usually none); the
  // board's subscription starts after it and skips those, so each move is counted once, by
  // the first screen's counts or by its event, never by both.
  const Q_COLUMNS = `query BoardColumns($project: String, $last: Int!) {
    event_head events_seen_after_head
    requested: tasks(project: $project, state: requested, last: $last) { ${COLUMN} }
    routed: tasks(project: $project, state: routed, last: $last) { ${COLUMN} }
    accepted: tasks(project: $project, state: accepted, last: $last) { ${COLUMN} }
    working: tasks(project: $project, state: working, last: $last) { ${COLUMN} }
    waiting: tasks(project: $project, state: waiting, last: $last) { ${COLUMN} }
    verifying: tasks(project: $project, state: verifying, last: $last) { ${COLUMN} }
    approval: tasks(project: $project, state: approval, last: $last) { ${COLUMN} }
    returned: tasks(project: $project, state: returned, last: $last) { ${COLUMN} }
    completed: tasks(project: $project, state: completed, last: $last) { ${COLUMN} }
    rejected: tasks(project: $project, state: rejected, last: $last) { ${COLUMN} }
    cancelled: tasks(project: $project, state: cancelled, last: $last) { ${COLUMN} } }`;
  const Q_COLUMN_MORE = `query BoardColumnMore($project: String, $state: TaskState, $before: String, $last: Int!) {
    tasks(project: $project, state: $state, last: $last, before: $before) { ${COLUMN} } }`;
  const Q_PROBE = `query BoardProbe { tasks(first: 1) { edges { node { id project } } } }`;
  const Q_PROJECTS = `query BoardProjects { tasks(first: 200) { edges { node { project } } } }`;
  const Q_STATES = `query BoardStates { task_states { name description terminal } }`;
  const Q_ME = `query BoardMe { me { kind id } }`;
  const LINK = `id state display_title packet { task }`;
  // Why the gate holds a handoff: read only by the one who may approve it (null for others).
  const HOLD = `gate_hold { rule_id rule { effect priority project requester_owner
    requester_agent deliverable_type capability_kind } }`;
  const Q_DETAIL = `query BoardTask($id: ID!) { task(id: $id) {
    id version allowed_verbs as_protocol events { ${ASKED} } ${HOLD}
    parent { ${LINK} } children { ${LINK} } dependencies { ${LINK} } } }`;
  const TIMELINE_PAGE = 20;
  const Q_TIMELINE = `query BoardTimeline($task_id: ID!, $after: String, $first: Int!) {
    task_events(task_id: $task_id, after: $after, first: $first) {
      total_count pageInfo { hasNextPage endCursor }
      edges { node { cursor seq kind from_state to_state waiting_on verb actor at note version } } } }`;
  // The inbox: what waits on the viewer, in every project, as the server pages it: each
  // group (what is asked) oldest waiting first, narrowed to a project on the server, a page
  // of INBOX_PAGE at a time ("Show more" reads the next); a move of a task in it, or of a
  // task now waiting, makes the board read the pages it holds again.
  const INBOX_PAGE = 20;
  const INBOX_ITEMS = `total_count pageInfo { hasNextPage endCursor }
      edges { node { ${CARD} events { ${ASKED} } } }`;
  const Q_INBOX = `query BoardInbox($project: String, $first: Int!) {
    all: inbox(first: 0) { total_count }
    projects: inbox_projects { project count }
    decide: inbox(asked: decide_result, project: $project, first: $first) { ${INBOX_ITEMS} }
    approve: inbox(asked: approve_handoff, project: $project, first: $first) { ${INBOX_ITEMS} }
    answer: inbox(asked: answer, project: $project, first: $first) { ${INBOX_ITEMS} } }`;
  const Q_INBOX_MORE = `query BoardInboxMore($asked: InboxAsk!, $project: String, $after: String, $first: Int!) {
    inbox(asked: $asked, project: $project, after: $after, first: $first) { ${INBOX_ITEMS} } }`;
  const S_INBOX = `subscription BoardInboxEvents($after: String) {
    task_events(after: $after) { cursor task_id to_state verb actor version } }`;
  const S_HEAD = `subscription BoardHead($task_id: ID!) {
    task_events(task_id: $task_id) { cursor } }`;
  // In lists: a board far behind (back from a lost connection) catches up a list at a time,
  // then each list holds what arrived meanwhile.
  const EVENT_BATCH = 500;
  const S_EVENTS = `subscription BoardEvents($project: String, $after: String) {
    task_event_batches(project: $project, after: $after, batch_size: ${EVENT_BATCH}) {
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

  // ---- time: relative and local, the exact instant on hover ------------------------------

  const instant = (iso) => new Date(String(iso).replace(/(\.\d{3})\d+/, "$1"));

  function ago(iso, now = Date.now()) {
    const s = Math.round((now - instant(iso).getTime()) / 1000);
    if (!Number.isFinite(s)) return String(iso);
    if (s < 45) return "just now";
    const steps = [[60, "min", 60], [24, "h", 3600], [30, "d", 86400]];
    for (const [limit, unit, size] of steps) {
      const n = Math.round(s / size);
      if (n < limit) return `${Math.max(n, 1)} ${unit} ago`;
    }
    return instant(iso).toLocaleDateString();
  }

  // A <time>: "3 min ago", the local date and time in its tooltip; kept fresh by tick().
  function when(iso, prefix = "") {
    if (!iso) return h("span", { class: "muted", text: "—" });
    return h("time", {
      datetime: iso, "data-prefix": prefix, title: instant(iso).toLocaleString(),
      text: `${prefix}${ago(iso)}`,
    });
  }

  // How long since: "< 1 min", "3 min", "2 h", "5 d".
  function lasted(iso, now = Date.now()) {
    const s = Math.round((now - instant(iso).getTime()) / 1000);
    if (!Number.isFinite(s)) return String(iso);
    if (s < 60) return "< 1 min";
    if (s < 3600) return `${Math.floor(s / 60)} min`;
    if (s < 86400) return `${Math.floor(s / 3600)} h`;
    return `${Math.floor(s / 86400)} d`;
  }

  // A <time> that counts how long since `iso`: "waiting 3 h".
  function since(iso, prefix) {
    return h("time", {
      datetime: iso, "data-prefix": prefix, "data-lasted": "1", title: instant(iso).toLocaleString(),
      text: `${prefix}${lasted(iso)}`,
    });
  }

  function tick() {
    const now = Date.now();
    for (const t of document.querySelectorAll("time[datetime]")) {
      const iso = t.getAttribute("datetime");
      t.textContent = `${t.dataset.prefix || ""}${t.dataset.lasted ? lasted(iso, now) : ago(iso, now)}`;
    }
  }

  // ---- HTTP GraphQL --------------------------------------------------------------------

  class GraphQLError extends Error {
    constructor(errors) {
      super(errors.map((e) => e.message).join("; "));
      this.errors = errors;
      this.code = errors[0]?.extensions?.code;
    }
  }

  // A failure in words a person understands; the code stays, in brackets, for a report.
  function inWords(error) {
    switch (error.code) {
      case "unreachable": return "Can't reach the server";
      case "forbidden": return "You may not do this to this task now";
      case "not_found": return "This task is gone, or you no longer see it";
      case "invalid_input": return `The server refused what was sent: ${error.message}`;
      case "invalid_state": return `The task is no longer where this needs it: ${error.message}`;
      case "turn_budget_exhausted": return "The task has used all of its turns";
      case "unavailable": return "The server cannot do it just now (its database is away or it is busy)";
      case "rate_limited": return "Too many requests just now";
      case "internal": return "The server failed to do it";
      case "http": return `The server answered ${error.message}`;
      default: return error.message;
    }
  }
  // Failures after which nothing was done, so sending again is safe (and a move carries
  // expected_version: were the first to have been made after all, the second is refused).
  const RESENDABLE = new Set(["unreachable", "unavailable", "rate_limited", "internal", "http"]);

  async function gql(token, query, variables = {}) {
    let response;
    try {
      response = await fetch("/graphql", {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      });
    } catch {
      throw new GraphQLError([{ message: "Can't reach the server", extensions: { code: "unreachable" } }]);
    }
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
      this.held = false; // closed on purpose (paused): no reconnecting until resumed
      this.timer = null;
      this.stopped = false;
      this.connections = 0;
      this.lastMessage = 0; // when the server last said anything (an event, a pong)
      this.pinged = 0;
      this.keepalive = setInterval(() => this.checkAlive(), 250);
      this.offline = navigator.onLine === false;
      this.onOffline = () => { this.offline = true; this.drop(); };
      this.onOnline = () => {
        this.offline = false;
        clearTimeout(this.timer);
        this.attempt = 0;
        if (!this.ws) this.connect();
      };
      addEventListener("offline", this.onOffline);
      addEventListener("online", this.onOnline);
    }

    url() {
      return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
    }

    connect() {
      if (this.offline && !this.stopped && !this.ws) this.onStatus("offline");
      if (this.stopped || this.ws || this.held || this.offline) return;
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
      this.onStatus(this.offline ? "offline" : "reconnecting");
      if (this.held || this.offline) return;
      const backoff = Math.min(15000, 500 * 2 ** this.attempt) * (0.5 + Math.random() / 2);
      this.attempt += 1;
      this.timer = setTimeout(() => this.connect(), backoff);
    }

    // Close the socket now and stay away until resume(): the connection lost, on demand.
    pause() {
      this.held = true;
      clearTimeout(this.timer);
      this.drop();
    }

    resume() {
      if (!this.held) return;
      this.held = false;
      this.attempt = 0;
      this.connect();
    }

    // Close the socket now; it reconnects by itself, with backoff.
    drop() {
      const ws = this.ws;
      if (!ws) return;
      if (ws.readyState === WebSocket.CONNECTING) ws.onopen = () => ws.close();
      else ws.close(4000, "client dropped the connection");
      // Do not wait for the closing handshake: treat the socket as gone at once.
      this.closed(ws, { code: 4000 });
    }

    // The connection is alive while the server answers: after a second of silence a ping,
    // whose pong (or any message) must come within LOST_AFTER_MS of the last word.
    checkAlive() {
      if (!this.acked) return;
      const now = Date.now();
      const silent = now - this.lastMessage;
      if (silent > LOST_AFTER_MS) {
        metrics.lost = { silentMs: silent, at: now };
        return this.drop();
      }
      if (silent > PING_AFTER_MS && now - this.pinged > PING_AFTER_MS) {
        this.pinged = now;
        this.send({ type: "ping" });
      }
    }

    stop() {
      this.stopped = true;
      clearTimeout(this.timer);
      clearInterval(this.keepalive);
      removeEventListener("offline", this.onOffline);
      removeEventListener("online", this.onOnline);
      const ws = this.ws;
      this.ws = null;
      if (ws) ws.close(1000, "bye");
      this.onStatus("idle");
    }
  }

  // ---- the board -----------------------------------------------------------------------

  // fromToken: from a token entered (or the page opened with one) to every page drawn.
  const metrics = {
    load: null, render: null, renderFrame: null, fromToken: null, firstScreen: null, applies: [], events: 0,
  };

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
      this.current = null; // the card in the Tab order (rove)
      this.filter = {};
      this.onChange = () => {};
      // A "more" button only on a card whose title does not fit its three lines, checked
      // when the card comes into view (and again when the columns change width).
      this.clamped = new IntersectionObserver((entries) => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          this.clamped.unobserve(entry.target);
          this.fitTitle(entry.target);
        }
      });
      let resized = 0;
      addEventListener("resize", () => {
        clearTimeout(resized);
        resized = setTimeout(() => {
          for (const { el, task } of this.cards.values()) {
            const title = task.display_title || task.packet?.task || task.id;
            if (title.length > SHORT_TITLE && !el.classList.contains("expanded")) this.clamped.observe(el);
          }
        }, 200);
      });
      this.build();
    }

    build() {
      const columns = STATES.map((state) => {
        const count = h("span", { class: "n", text: "0" });
        const list = h("ol", { class: "cards", "data-state": state, "aria-label": state });
        const more = h("button", { type: "button", class: "more-cards", "data-more-state": state, hidden: true });
        const col = h("section", {
          class: `column strip${TERMINAL.has(state) ? " terminal" : ""}${PASSING.has(state) ? " passing" : ""}`,
          "data-state": state,
        }, h("h2", null, h("span", { text: state }), count), list, more);
        // n: the column's tasks (the server's count, kept by the events), loaded or not;
        // before: the cursor of the column's next (older) page, null once it is all here
        this.columns.set(state, { col, list, count, more, n: 0, capped: false, before: null });
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
      for (const c of this.columns.values()) {
        c.list.replaceChildren();
        c.capped = false;
        this.paged(c, null);
        this.count(c, -c.n);
      }
    }

    count(column, delta) {
      column.n = Math.max(0, column.n + delta);
      column.count.textContent = this.told(column);
      column.col.classList.toggle("strip", column.n === 0 && !column.list.firstChild);
    }

    told(column) { return `${column.n}${column.capped ? "+" : ""}`; }

    get total() { return [...this.columns.values()].reduce((a, c) => a + c.n, 0); }

    // Whether the column has an older page to read, and its button saying so.
    paged(column, before) {
      column.before = before;
      column.more.hidden = !before;
      if (before) {
        const left = column.n - column.list.children.length;
        const state = column.list.getAttribute("aria-label");
        column.more.textContent = `Show ${Math.max(1, Math.min(COLUMN_PAGE, left))} more ${state}`;
      }
    }

    // The whole title (three lines, then "more"), and a line that tells cards apart.
    card(task) {
      const title = task.display_title || task.packet?.task || task.id;
      const meta = h("div", { class: "m" },
        h("span", { class: "tag", text: task.packet?.deliverable_type }),
        h("span", { class: "who", text: task.assignee }),
        task.waiting_on && h("span", { class: "tag wait", text: `on ${task.waiting_on}` }),
        WAITS.has(task.state) ? since(task.updated_at, "waiting ")
          : when(task.updated_at, TERMINAL.has(task.state) ? "ended " : "last move "));
      const el = h("li", {
        class: "card", tabindex: task.id === this.current ? "0" : "-1", "data-id": task.id, "data-state": task.state,
        "data-version": String(task.version), title: task.packet?.task,
      }, h("div", { class: "t", text: title }), meta);
      if (title.length > SHORT_TITLE) this.clamped.observe(el);
      if (task.id === this.selected) el.classList.add("selected");
      if (!this.matches(task)) el.hidden = true;
      return el;
    }

    // The first screen: every column's first page drawn in one go, newest activity first,
    // and each column's count. `pages`: state -> a tasks connection of that state.
    render(pages) {
      performance.mark("board:render:start");
      this.cards.clear();
      const tasks = STATES.flatMap((s) => pages[s]?.edges.map((e) => e.node) ?? []);
      const sorted = [...tasks].sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1));
      const frags = new Map(STATES.map((s) => [s, document.createDocumentFragment()]));
      for (const task of sorted) {
        const el = this.card(task);
        this.cards.set(task.id, { el, task });
        frags.get(task.state)?.append(el);
      }
      for (const [state, c] of this.columns) {
        const page = pages[state];
        c.list.replaceChildren(frags.get(state));
        c.capped = Boolean(page?.total_count_capped);
        this.count(c, (page?.total_count ?? 0) - c.n);
        this.paged(c, page?.pageInfo.hasPreviousPage ? page.pageInfo.startCursor : null);
      }
      void this.root.offsetHeight; // include style and layout in the measure
      const ms = measure("board:render", "board:render:start", { tasks: tasks.length });
      metrics.render = { tasks: tasks.length, ms };
      requestAnimationFrame(() => setTimeout(() => {
        metrics.renderFrame = { tasks: tasks.length, ms: measure("board:render-frame", "board:render:start") };
      }));
      this.ready = true;
      this.recount();
      this.keepCurrent();
      this.schedule();
      this.onChange();
      this.showFirstHeld();
    }

    fitTitle(card) {
      if (card.classList.contains("expanded")) return;
      const t = card.querySelector(".t");
      const cut = t.scrollHeight > t.clientHeight + 1;
      const button = card.querySelector(".expand");
      if (cut && !button) {
        t.after(h("button", {
          type: "button", class: "expand", "aria-expanded": "false", text: "more",
          "aria-label": "more of the title", tabindex: card.dataset.id === this.current ? "0" : "-1",
        }));
      } else if (!cut && button) button.remove();
    }

    // On a narrow screen (one column at a time) the board opens on the first that holds a task.
    showFirstHeld() {
      if (!window.matchMedia("(max-width: 600px)").matches) return;
      const first = [...this.columns.values()].find((c) => c.n > 0 && !c.col.hidden);
      if (!first) return;
      const left = first.col.getBoundingClientRect().left - this.root.getBoundingClientRect().left;
      this.root.scrollLeft += left - 8;
    }

    // Events: kept by task id, newest version wins, drawn once per frame.
    offer(task) {
      const waiting = this.pending.get(task.id);
      const known = waiting?.task || this.cards.get(task.id)?.task;
      if (known && known.version >= task.version) return;
      this.pending.set(task.id, { task });
      this.schedule();
    }

    // The counts follow the events, each once, whatever cards the board holds: they are the
    // first screen's (as of its event_head) and every event after it. `from`: the state the
    // event moved its task from (null: it created it).
    moved(from, to) {
      if (from === to) return;
      if (from != null && this.columns.has(from)) this.count(this.columns.get(from), -1);
      if (this.columns.has(to)) this.count(this.columns.get(to), 1);
    }

    // The rest of a project read whole: a card for each task not drawn (nor waiting to be),
    // then each column in the first screen's order, newest activity first. The counts stay
    // the server's; an event on its way is drawn as it comes.
    fill(tasks) {
      for (const task of tasks) {
        if (this.cards.has(task.id) || this.pending.has(task.id)) continue;
        this.cards.set(task.id, { el: this.card(task), task });
      }
      const held = new Map(STATES.map((st) => [st, []]));
      for (const c of this.cards.values()) held.get(c.task.state)?.push(c);
      for (const [state, column] of this.columns) {
        const cards = held.get(state).sort((a, b) => (a.task.updated_at < b.task.updated_at ? 1 : -1));
        column.list.replaceChildren(...cards.map((c) => c.el));
        this.paged(column, null);
      }
      this.recount();
      this.keepCurrent();
      this.onChange();
    }

    // A column's next (older) page, appended below what it shows.
    more(state, page) {
      const c = this.columns.get(state);
      if (!c) return;
      const frag = document.createDocumentFragment();
      for (const task of page.edges.map((e) => e.node).reverse()) {
        if (this.cards.has(task.id) || this.pending.has(task.id) || task.state !== state) continue;
        const el = this.card(task);
        this.cards.set(task.id, { el, task });
        frag.append(el);
      }
      c.list.append(frag);
      this.paged(c, page.pageInfo.hasPreviousPage ? page.pageInfo.startCursor : null);
      this.recount();
      this.onChange();
    }

    schedule() {
      if (!this.ready || this.frame || !this.pending.size) return;
      this.frame = requestAnimationFrame(() => { this.frame = 0; this.flush(); });
    }

    // Draw what is pending now, not at the next frame.
    flushNow() {
      if (this.frame) cancelAnimationFrame(this.frame);
      this.frame = 0;
      if (this.pending.size) this.flush();
    }

    flush() {
      performance.mark("board:apply:start");
      const batch = [...this.pending.values()];
      this.pending.clear();
      for (const { task } of batch) this.apply(task);
      void this.root.offsetHeight;
      const ms = measure("board:apply", "board:apply:start", { tasks: batch.length });
      metrics.applies.push({ tasks: batch.length, ms });
      if (metrics.applies.length > 200) metrics.applies.shift();
      this.recount();
      this.keepCurrent();
      this.onChange(batch.map((b) => b.task));
      metrics.drawnAt = performance.now();
    }

    // One card: replaced by its new version at the top of its (possibly new) column (the
    // counts have moved with its events already).
    apply(task) {
      const old = this.cards.get(task.id);
      if (old && old.task.version >= task.version) return;
      const el = this.card(task);
      const column = this.columns.get(task.state);
      if (old) old.el.remove();
      if (!column) return;
      column.list.prepend(el);
      el.classList.add("fresh"); // a change (pages of the load are drawn by render, fill, more)
      this.cards.set(task.id, { el, task });
    }

    // Find: which cards are shown. Text matches the title or the task; assignee and
    // requester match any part of the id (`bob/` is every agent of bob's).
    setFilter(filter) {
      this.filter = { ...filter, state: STATES.includes(filter.state) ? filter.state : "" };
      filter = this.filter;
      for (const { el, task } of this.cards.values()) el.hidden = !this.matches(task);
      for (const [state, c] of this.columns) c.col.hidden = Boolean(filter.state) && filter.state !== state;
      this.recount();
      this.keepCurrent();
    }

    // Keyboard: one card of the board is in the Tab order (the current one); the arrow keys
    // move between cards (up, down) and between the columns that show cards (left, right).
    rove(el) {
      const old = this.cards.get(this.current)?.el;
      if (old && old !== el) {
        old.tabIndex = -1;
        const b = old.querySelector(".expand");
        if (b) b.tabIndex = -1;
      }
      this.current = el?.dataset.id ?? null;
      if (!el) return;
      el.tabIndex = 0;
      const b = el.querySelector(".expand");
      if (b) b.tabIndex = 0;
    }

    // The current card stays one that is shown: the first of the first column, when it is not.
    keepCurrent() {
      const el = this.cards.get(this.current)?.el;
      if (el && el.isConnected && !el.hidden) return;
      const first = [...this.columns.values()].filter((c) => !c.col.hidden)
        .map((c) => [...c.list.children].find((x) => !x.hidden)).find(Boolean);
      this.rove(first || null);
    }

    visibleIn(column) {
      return [...column.list.children].filter((x) => !x.hidden);
    }

    step(card, key) {
      const column = this.columns.get(card.dataset.state);
      const here = this.visibleIn(column);
      const at = here.indexOf(card);
      if (key === "ArrowDown") return here[at + 1];
      if (key === "ArrowUp") return here[at - 1];
      if (key === "Home") return here[0];
      if (key === "End") return here[here.length - 1];
      const shown = [...this.columns.values()].filter((c) => !c.col.hidden && this.visibleIn(c).length);
      const next = shown[shown.indexOf(column) + (key === "ArrowRight" ? 1 : -1)];
      if (!next) return null;
      const there = this.visibleIn(next);
      return there[Math.min(at, there.length - 1)];
    }

    filtered() {
      const f = this.filter;
      return Boolean(f.q || f.assignee || f.requester || f.state);
    }

    matches(task) {
      const f = this.filter;
      const has = (value, part) => !part || (value || "").toLowerCase().includes(part.toLowerCase());
      return (!f.state || task.state === f.state) && has(task.assignee, f.assignee)
        && has(task.requester, f.requester)
        && (!f.q || has(task.display_title, f.q) || has(task.packet?.task, f.q));
    }

    // With a filter, each column says how many of its cards are shown.
    recount() {
      if (!this.filtered()) {
        for (const c of this.columns.values()) c.count.textContent = this.told(c);
        this.shown = this.cards.size;
        return;
      }
      const shown = new Map(STATES.map((st) => [st, 0]));
      for (const { task } of this.cards.values()) {
        if (this.matches(task)) shown.set(task.state, shown.get(task.state) + 1);
      }
      for (const [state, c] of this.columns) c.count.textContent = `${shown.get(state)} of ${this.told(c)}`;
      this.shown = [...shown.values()].reduce((a, b) => a + b, 0);
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
          text: uncovered ? "uncovered" : `evidence ${cov?.evidence?.map((e) => `#${e + 1}`).join(" ")}`,
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

  // A result's status in the protocol's words for the decision that set it: `rejected` is
  // both "request changes" (the task went back to work) and "reject" (the task ended).
  function decisionOf(t) {
    const r = t.result;
    if (!r) return null;
    if (r.status === "accepted") return { words: "accepted", tone: "ok" };
    if (r.status === "submitted") return { words: t.state === "approval" ? "waiting for a decision" : "submitted", tone: "" };
    if (r.status === "rejected") {
      if (t.state === "rejected") return { words: "rejected", tone: "bad" };
      return { words: r.decided_by_policy ? "sent back by the result rule" : "changes requested", tone: "warn" };
    }
    return { words: r.status, tone: "" };
  }

  function verdictList(t) {
    const r = t.result;
    if (!r?.verdicts?.length) return undefined;
    const criteria = t.packet.acceptance_criteria || [];
    return h("ul", { class: "verdict-list" }, r.verdicts.map((v) => h("li", null,
      h("span", { class: `tag ${v.accepted ? "ok" : "bad"}`, text: v.accepted ? "accepted" : "not accepted" }),
      ` ${v.criterion + 1}. ${criteria[v.criterion] ?? ""}`, v.note ? h("span", { class: "muted", text: ` — ${v.note}` }) : "")));
  }

  function resultSection(t) {
    const r = t.result;
    if (!r) return h("p", { class: "muted", text: "no result yet" });
    const report = r.evidence_report || {};
    const stale = new Map((report.stale || []).map((s) => [s.evidence, s.why]));
    const decision = decisionOf(t);
    return [
      fields([
        ["status", h("span", { class: `tag ${decision.tone} result-status`, text: decision.words })],
        ["revision", r.revision], ["returned", h("span", null, `${text(r.returned_by)}, `, when(r.returned_at))],
        ["provenance", `${r.provenance}, ${text(r.provenance_status)}`],
        ["decided by", r.decided_by ? `${who(r.decided_by)}${r.decided_by_policy ? ` (${r.decided_by_policy})` : ""}` : null],
        ["reason", r.reason || undefined],
        ["verdicts", verdictList(t)],
        ["lineage", r.lineage ? r.lineage.cause?.kind + (r.lineage.cause?.task_id ? ` ${r.lineage.cause.task_id}` : "") : undefined],
      ]),
      pre(r.summary),
      h("strong", { text: "Evidence" }),
      list(r.evidence, "ol", (e, i) => [
        h("span", { class: "tag", text: e.kind }), " ", e.summary,
        e.criteria?.length ? h("span", { class: "muted", text: ` → ${e.criteria.length > 1 ? "criteria" : "criterion"} ${e.criteria.map((c) => c + 1).join(", ")}` }) : "",
        stale.has(i) ? [" ", h("span", { class: "tag bad", text: `stale: ${stale.get(i)}` })] : "",
        e.url ? h("div", null, webLink(e.url)) : "",
        e.observed_at ? h("div", { class: "muted" }, when(e.observed_at, "observed "), e.verifier ? ` by ${e.verifier}` : "") : "",
        e.content ? pre(e.content) : "",
      ].filter((x) => x !== "")),
      h("strong", { text: "Evidence report" }),
      fields([
        ["complete", h("span", { class: `tag ${report.complete ? "ok" : "bad"}`, text: report.complete ? "complete" : "incomplete" })],
        ["uncovered", report.uncovered?.length ? report.uncovered.map((i) => `criterion ${i + 1}`).join(", ") : "none"],
        ["stale", report.stale?.length ? report.stale.map((s) => `#${s.evidence + 1} (${s.why})`).join(", ") : "none"],
        ["general", report.general?.length ? report.general.map((i) => `#${i + 1}`).join(", ") : "none"],
      ]),
      r.artifacts?.length ? [h("strong", { text: "Artifacts" }), list(r.artifacts, "ol", (a) => a.ref)] : null,
    ];
  }

  // ---- the timeline: the task's events, a page at a time --------------------------------

  // What an event did, in words: a decision by its name, other verbs as a person says them.
  const SAID = {
    approve_handoff: "approved the handoff", deny_task: "denied the task", accept_task: "accepted the task",
    start_task: "started work", save_checkpoint: "saved a checkpoint", wait_on: "asked a question",
    answer: "answered", stop_run: "stopped the run", resume_run: "resumed the run",
    hand_back: "handed the task back", return_result: "returned a result", cancel_task: "cancelled the task",
    reroute: "rerouted the task", handoff: "handed the task off",
  };
  function said(e) {
    if (e.verb === "decide_result") {
      if (e.to_state === "completed") return "accepted the result";
      if (e.to_state === "rejected") return "rejected the result";
      return "requested changes";
    }
    if (e.kind === "result" && e.to_state === "working") return "returned a result; the result rule sent it back";
    if (e.kind === "result" && e.to_state === "completed") return "returned a result; the result rule accepted it";
    if (e.kind === "result" && e.to_state === "approval") return "returned a result for decision";
    if (e.verb === "wait_on" && e.waiting_on === "owner_approval") return "the gate held the handoff";
    return SAID[e.verb] || (e.kind === "created" ? "created the task" : e.verb || e.kind);
  }

  function timelineItem(e) {
    const move = e.from_state && e.from_state !== e.to_state
      ? [h("span", { class: "tag", text: e.from_state }), " → ", h("span", { class: "tag", text: e.to_state })]
      : h("span", { class: "tag", text: e.to_state });
    return h("li", { class: `tl ${e.kind}`, "data-seq": String(e.seq), "data-kind": e.kind },
      h("div", { class: "tl-head" },
        when(e.at), " ",
        h("strong", { class: "tl-actor", text: e.actor || "the server" }), " ",
        h("span", { class: "tl-said", text: said(e) }),
        e.verb ? h("span", { class: "muted tl-verb", text: ` (${e.verb})` }) : ""),
      h("div", null, h("span", { class: `tag kind-${e.kind}`, text: e.kind }), " ", move,
        e.waiting_on ? [" ", h("span", { class: "tag wait", text: `on ${e.waiting_on}` })] : "",
        h("span", { class: "muted", text: ` v${e.version}` })),
      e.note ? h("div", { class: "muted tl-note", text: e.note }) : null);
  }

  // `box` holds the list and a button for the next page; `shown` is how many to load at
  // first (a refresh keeps as many as the reader had opened).
  async function loadTimeline(box, taskId, shown = TIMELINE_PAGE) {
    const items = h("ol", { class: "timeline", "aria-label": "timeline" });
    const more = h("button", { type: "button", class: "more", hidden: true });
    const counter = h("p", { class: "muted tl-count" });
    let after = null;
    let loaded = 0;
    let complete = false;
    const page = async (first) => {
      more.disabled = true;
      try {
        const data = await gql(app.token, Q_TIMELINE, { task_id: taskId, after, first });
        const conn = data.task_events;
        items.append(...conn.edges.map((e) => timelineItem(e.node)));
        loaded += conn.edges.length;
        after = conn.pageInfo.endCursor || after;
        counter.textContent = `${loaded} of ${conn.total_count} events`;
        complete = !conn.pageInfo.hasNextPage;
        more.hidden = complete;
        more.textContent = `Show ${Math.min(TIMELINE_PAGE, conn.total_count - loaded)} more`;
      } catch (error) {
        counter.textContent = `Could not load the timeline: ${inWords(error)}.`;
      } finally {
        more.disabled = false;
      }
    };
    more.addEventListener("click", () => page(TIMELINE_PAGE));
    box.replaceChildren(counter, items, more);
    // A refresh shows as many events as the reader had opened, and the new ones too when
    // the reader had reached the end.
    box.timelineShown = () => (complete ? loaded + TIMELINE_PAGE : loaded);
    await page(Math.min(Math.max(shown, TIMELINE_PAGE), PAGE));
  }

  // ---- acting: one form per verb the viewer may use now --------------------------------

  // Each verb's form is the server's declaration (the task_verbs query): its label, its place
  // among the forms (rank), its fields, and its document, which declares every argument (an
  // empty field is left out of the variables) and which the server always trusts, so the
  // forms work under --trusted-documents-only. Read once, before a task's forms are drawn.
  const Q_VERBS = `query BoardVerbs { task_verbs {
    name label rank ends_task document form { name label kind required options placeholder none } } }`;
  const VERBS = {}; // name → its declaration
  const MUTATIONS = {}; // name → its document
  let ORDER = []; // the names, the lowest rank first
  let verbsRead = null;

  function loadVerbs() {
    verbsRead ||= gql(app.token, Q_VERBS).then((data) => {
      for (const verb of data.task_verbs) {
        VERBS[verb.name] = verb;
        MUTATIONS[verb.name] = verb.document;
      }
      ORDER = [...data.task_verbs].sort((a, b) => a.rank - b.rank).map((verb) => verb.name);
    }, (error) => {
      verbsRead = null;
      throw error;
    });
    return verbsRead;
  }

  let fieldIds = 0;

  function verdictFields(criteria) {
    return h("fieldset", { class: "verdicts" }, h("legend", { text: "Verdicts" }),
      criteria.map((c, i) => {
        const id = `f${++fieldIds}`;
        const noteId = `f${++fieldIds}`;
        return h("div", { class: "verdict" },
          h("label", { for: id, text: `${i + 1}. ${c}` }),
          h("select", { id, "data-criterion": String(i) },
            h("option", { value: "", text: "no verdict" }),
            h("option", { value: "yes", text: "accepted" }),
            h("option", { value: "no", text: "not accepted" })),
          h("label", { for: noteId, class: "sr-only", text: `note on criterion ${i + 1}` }),
          h("input", { id: noteId, "data-note": String(i), placeholder: "note (optional)" }));
      }));
  }

  function field(f, task) {
    if (f.kind === "verdicts") return verdictFields(task.packet.acceptance_criteria);
    const id = `f${++fieldIds}`;
    const attrs = { id, name: f.name, required: f.required, placeholder: f.placeholder };
    const control = f.kind === "textarea" || f.kind === "notes" ? h("textarea", { ...attrs, rows: "2" })
      : f.kind === "select" ? h("select", attrs, f.none && h("option", { value: "", text: f.none }),
        f.options.map((o) => h("option", { value: o, text: o.replace(/_/g, " ") })))
      : h("input", attrs);
    return h("div", { class: "field" }, h("label", { for: id, text: f.label }), control);
  }

  function readForm(form, spec) {
    const values = {};
    for (const el of form.querySelectorAll("[name]")) if (el.value.trim()) values[el.name] = el.value.trim();
    const verdicts = [...form.querySelectorAll("select[data-criterion]")].filter((el) => el.value)
      .map((el) => {
        const criterion = Number(el.dataset.criterion);
        const note = form.querySelector(`[data-note='${criterion}']`).value.trim();
        return { criterion, accepted: el.value === "yes", ...(note ? { note } : {}) };
      });
    if (verdicts.length) values.verdicts = verdicts;
    return argumentsOf(values, spec.form);
  }

  // A form's values as its verb's arguments: a field named `a.b` fills the field b of the
  // argument a; notes become evidence notes, one a line.
  function argumentsOf(values, fields) {
    const args = {};
    for (const f of fields) {
      let value = values[f.name];
      if (f.kind === "notes") {
        value = (value || "").split("\n").map((x) => x.trim()).filter(Boolean)
          .map((summary) => ({ kind: "note", summary }));
      }
      if (value === undefined) continue;
      const path = f.name.split(".");
      let into = args;
      for (const step of path.slice(0, -1)) into = into[step] ||= {};
      into[path[path.length - 1]] = value;
    }
    return args;
  }

  function actSection(task, version, verbs) {
    const known = verbs.filter((v) => VERBS[v]).sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
    if (!known.length) return h("p", { class: "muted", text: "Nothing you may do on this task now." });
    return h("div", { class: "act" }, known.map((verb) => {
      const spec = VERBS[verb];
      const form = h("form", { class: "verb", "data-verb": verb, "aria-label": spec.label },
        spec.form.map((f) => field(f, task)),
        h("button", { type: "submit", class: spec.ends_task ? "danger" : "", text: spec.label }));
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        act(task.id, version, verb, readForm(form, spec), form);
      });
      return form;
    }));
  }

  // The board's own moves, by task id: { verb, version (the one it was sent from), done }.
  // A move is the board's own when the task's event at version + 1 is that verb by the
  // signed-in principal: with expected_version no one else's move can have that version
  // and this verb by this actor. Only another principal's move takes a form away unasked.
  function ownMove(task, verb) {
    const sent = app.mine.get(task.id);
    if (!sent || sent.verb !== verb) return false;
    const event = (task.events || []).find((e) => e.version === sent.version + 1);
    return Boolean(event && event.verb === verb && event.actor === app.me?.id);
  }

  // A sent move says done when its answer or its event arrives, whichever comes first.
  function arrived(taskId, version, event) {
    const sent = app.mine.get(taskId);
    if (!sent || sent.done || !(version > sent.version)) return;
    if (event && !(event.verb === sent.verb && event.actor === app.me?.id)) return;
    done(taskId, event?.to_state);
  }

  function done(taskId, state) {
    const sent = app.mine.get(taskId);
    if (!sent || sent.done) return;
    sent.done = true;
    if (app.openId === taskId) {
      actStatus(`${VERBS[sent.verb].label}: done${state ? `; the task is now ${state}` : ""}.`);
    }
  }

  function actStatus(message, error = false, action = null) {
    const el = $("act-status");
    el.hidden = !message;
    el.textContent = message || "";
    if (action) {
      el.append(" ", h("button", { type: "button", class: "resend", text: action.label, onclick: (e) => {
        e.currentTarget.disabled = true;
        action.run();
      } }));
    }
    el.classList.toggle("error", error);
    el.setAttribute("role", error ? "alert" : "status");
  }

  // Sends the verb with the version this view was drawn from. Nothing on the page moves
  // here: the card and the panel change when the event arrives. A stale view gets
  // `conflict`, and the panel is read again.
  async function act(taskId, version, verb, values, form) {
    const variables = { task_id: taskId, ...values, expected_version: version };
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    actStatus(`${VERBS[verb].label}: sending…`);
    app.mine.set(taskId, { verb, version, done: false });
    try {
      const data = await gql(app.token, MUTATIONS[verb], variables);
      app.acted.push({ verb, task_id: taskId, ok: true });
      done(taskId, data?.[verb]?.state);
    } catch (error) {
      app.acted.push({ verb, task_id: taskId, ok: false, code: error.code });
      if (error.code === "unauthenticated") return authFailed();
      const label = VERBS[verb].label;
      if (error.code === "conflict") {
        // Sent again after a failure, the first may have been made after all: if the task's
        // next version is this move by this person, it is done, not a conflict.
        await openDetail(taskId, true);
        if (app.mine.get(taskId)?.done) return;
        app.mine.delete(taskId);
        actStatus(`Not done: someone moved this task since you opened it (conflict: ${error.message}). `
          + "It has been refreshed; check it and act again.", true);
        return;
      }
      if (RESENDABLE.has(error.code)) {
        // kept in app.mine: should it have been made after all, its event says so
        actStatus(`Not done: ${inWords(error)}; your ${label.toLowerCase()} was not sent (${error.code}).`, true,
          { label: "Send again", run: () => act(taskId, version, verb, values, form) });
        return;
      }
      app.mine.delete(taskId);
      actStatus(`Not done: ${inWords(error)} (${error.code || "error"})`, true);
    } finally {
      button.disabled = false;
    }
  }

  // What the task's current wait, hand-back or stop says, from the event that moved it where
  // it stands: { note, actor, at, verb }, or null. The one place that reads it (the events
  // are the truth until the Task carries its open question itself).
  function askedOf(task, events) {
    const entered = [...(events || [])].reverse().find((e) => e.kind !== "checkpointed"
      && e.to_state === task.state && (task.state !== "waiting" || e.waiting_on === task.waiting_on));
    return entered ? { note: entered.note, actor: entered.actor, at: entered.at, verb: entered.verb } : null;
  }

  const waited = (asked) => (asked?.at ? [", ", since(asked.at, "waiting ")] : []);
  const byLine = (asked) => (asked ? [" by ", h("strong", { text: asked.actor || "the server" }), ", ", when(asked.at), ...waited(asked)] : []);

  // One evidence item as the decision needs it: its kind, summary and link.
  const evidenceLine = (e, n) => h("li", null, `#${n + 1} `, h("span", { class: "tag", text: e.kind }), ` ${e.summary}`,
    e.url ? [" ", webLink(e.url)] : "");

  // The result under decision: its summary, each criterion with the evidence for it, then
  // the evidence that cites no criterion (a note, a link to the change): all of it.
  function underDecision(t) {
    const r = t.result;
    if (!r) return null;
    const evidence = r.evidence || [];
    const general = evidence.map((e, n) => [e, n]).filter(([e]) => !e.criteria?.length);
    return [
      pre(r.summary),
      h("ol", { class: "asked-criteria" }, (t.packet.acceptance_criteria || []).map((c, i) => {
        const items = evidence.map((e, n) => [e, n]).filter(([e]) => e.criteria?.includes(i));
        return h("li", null, h("span", { text: c }), items.length
          ? h("ul", null, items.map(([e, n]) => evidenceLine(e, n)))
          : [" ", h("span", { class: "tag bad", text: "no evidence" })]);
      })),
      general.length ? [h("p", { class: "asked-sub", text: "Evidence for no criterion in particular" }),
        h("ul", { class: "asked-general" }, general.map(([e, n]) => evidenceLine(e, n)))] : null,
    ];
  }

  // The handoffs a gate rule matches, in words: "handoffs from alice's agents in project web".
  function ruleMatches(rule) {
    const from = rule.requester_agent ? ` from ${rule.requester_agent}`
      : rule.requester_owner ? ` from ${rule.requester_owner}'s agents` : " from other owners' agents";
    return `handoffs${from}`
      + (rule.project ? ` in project ${rule.project}` : " in any project")
      + (rule.deliverable_type ? `, a ${rule.deliverable_type} deliverable` : "")
      + (rule.capability_kind ? `, asking for a ${rule.capability_kind} capability` : "");
  }

  // A held handoff: which gate holds it and what for, in words (the rule's id is a detail).
  // The one who may approve it reads which of their own rules held it (`gate_hold`).
  function heldSection(t, hold) {
    const owner = (t.assignee || "").split("/")[0];
    const from = t.requester || who(t.requested_by) || "someone";
    const like = `from ${from} to ${t.assignee} in project ${t.project}, a ${t.packet?.deliverable_type || "task"} deliverable`;
    if (!hold) {
      return h("p", null, `${owner}'s permission gate holds handoffs like this one — ${like} — until ${owner} approves or denies it.`);
    }
    const rule = hold.rule;
    const because = rule
      ? ["Held because your rule: ", h("strong", { class: "gate-rule", text: `hold ${ruleMatches(rule)}` }),
        ` (priority ${rule.priority}).`]
      : hold.rule_id
        ? ["Held because of a rule of yours that you have deleted since."]
        : ["Held because none of your rules lets handoffs like this one through, so each waits for you."];
    return [h("p", { class: "gate-why" }, ...because),
      h("p", null, `This one is ${like}. Approve or deny it below.`)];
  }

  // What is being asked, drawn above the forms where the person acts on it.
  function askedSection(t, events, hold) {
    const asked = askedOf(t, events);
    const block = (title, body, ...extra) => h("section", { class: "asked", "aria-label": title },
      h("p", { class: "asked-head" }, h("strong", { text: title }), ...extra), body);
    const note = (fallback) => (asked?.note ? pre(asked.note) : h("p", { class: "muted", text: fallback }));
    if (t.state === "waiting" && (t.waiting_on === "human" || t.waiting_on === "agent")) {
      const to = t.waiting_on === "agent" ? ` to ${t.wait_agent || "an agent"}` : "";
      return block(`Question${to}`, note("No question was given."), ...byLine(asked));
    }
    if (t.state === "waiting" && t.waiting_on === "stopped") return block("Stopped", note("No reason was given."), ...byLine(asked));
    if (t.state === "waiting" && t.waiting_on === "owner_approval") {
      return block("Handoff held for approval", heldSection(t, hold), ...waited(asked));
    }
    if (t.state === "returned") return block("Handed back", note("No reason was given."), ...byLine(asked));
    if (t.state === "working" && t.result?.status === "rejected") {
      const r = t.result;
      const by = r.decided_by_policy ? `the result rule (${r.decided_by_policy})` : who(r.decided_by) || "the server";
      return block(r.decided_by_policy ? "Result sent back" : "Changes requested",
        [r.reason ? pre(r.reason) : h("p", { class: "muted", text: "No reason was given." }), verdictList(t)],
        " by ", h("strong", { text: by }), `, revision ${r.revision}`);
    }
    if (t.state === "approval") {
      const r = t.result;
      return block("Result to decide", underDecision(t), ` revision ${r?.revision ?? ""}`,
        r?.returned_by ? [", returned by ", h("strong", { text: r.returned_by })] : "", ...waited(r && { at: r.returned_at }));
    }
    return null;
  }

  // A form a live event removed: why, and what had been typed in it, to copy.
  function lostSection(lost) {
    if (!lost?.length) return null;
    return lost.map((l) => h("section", { class: "lost", role: "status", "aria-label": `${l.label}: not sent` },
      h("p", null, `The ${l.label} form is gone: the task moved to ${l.state}${l.actor ? ` (${l.actor})` : ""} before it was sent. What you typed is kept here to copy:`),
      h("textarea", { readonly: true, rows: "3", "aria-label": `what you typed in ${l.label}`, text: l.typed })));
  }

  // Where the task stands, in a sentence.
  function whereItStands(t) {
    const owner = (t.assignee || "").split("/")[0];
    switch (t.state) {
      case "requested": return "the permission gate is deciding on it";
      case "routed": return `waiting for ${t.assignee} to accept it`;
      case "accepted": return `accepted by ${t.assignee}, not started yet`;
      case "working": return `${t.assignee} is working on it`;
      case "waiting":
        if (t.waiting_on === "owner_approval") return `held until ${owner} approves the handoff`;
        if (t.waiting_on === "human") return "waiting for a person's answer";
        if (t.waiting_on === "agent") return `waiting for an answer from ${t.wait_agent || "an agent"}`;
        if (t.waiting_on === "stopped") return "its run is stopped until someone resumes it";
        return `waiting on ${t.waiting_on}`;
      case "verifying": return "its result is being checked";
      case "approval": return "its result waits for a decision";
      case "returned": return "handed back to the requester";
      case "completed": return "done: its result was accepted";
      case "rejected": return t.result?.status === "rejected" ? "ended: its result was rejected" : "ended: it was denied or refused";
      case "cancelled": return "cancelled";
      default: return "";
    }
  }

  function detailView(data, open, timelineShown) {
    const t = data.as_protocol;
    const href = (id) => `?${new URLSearchParams({ project: t.project, task: id })}`;
    const link = (x) => h("a", { "data-open": x.id, href: href(x.id), text: `${x.display_title || x.packet?.task || x.id}` },
      " ", h("span", { class: "tag", text: x.state }));
    const links = (xs) => (xs?.length ? h("ul", null, xs.map((x) => h("li", null, link(x))))
      : h("p", { class: "muted", text: "none" }));
    const body = [
      h("h2", { id: "detail-title", tabindex: "-1", text: t.display_title || t.packet.task }),
      h("p", { class: "where" }, h("span", { class: "tag", text: t.state }), " ", whereItStands(t)),
      // the likely next move first: what is asked, then the forms, then the rest
      h("h3", { text: "Act" }), lostSection(app.lost.get(t.id)), askedSection(t, data.events, data.gate_hold),
      actSection(t, data.version, data.allowed_verbs || []),
      h("h3", { text: "Task" }),
      fields([
        ["project", t.project], ["assignee", t.assignee], ["requester", t.requester || "—"],
        ["created", when(t.created_at)], ["last move", when(t.updated_at)],
      ]),
      h("details", { class: "ids" }, h("summary", { text: "details" }), fields([
        ["task id", t.id], ["version", data.version], ["requested by", who(t.requested_by)],
        ["route", t.route?.via + (t.route?.capability ? ` ${t.route.capability.kind}:${t.route.capability.name}` : "")],
        ["turn budget", t.turn_budget ?? "unlimited"], ["waiting on", t.waiting_on || undefined],
        ["verbs you may use", data.allowed_verbs?.length ? data.allowed_verbs.join(", ") : "none"],
        ["held by gate rule", t.waiting_on === "owner_approval" ? data.gate_hold?.rule_id
          || /gate rule (\S+)/.exec(askedOf(t, data.events)?.note || "")?.[1] : undefined],
      ])),
      window.PrickleGraph && h("button", { type: "button", class: "graph-open", text: "Graph", onclick: () => window.PrickleGraph.open(t.id, { token: app.token, onOpen: open }) }),
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
      h("h3", { text: "Timeline" }), h("div", { class: "events", id: "timeline" }),
    ];
    const root = h("div", { "data-task": t.id, "data-state": t.state, "data-version": String(data.version) }, body);
    root.timeline = loadTimeline(root.querySelector("#timeline"), t.id, timelineShown);
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
    seen: new Set(), // events after the first screen's cursor already in its counts
    openId: null,
    refresh: 0,
    loadId: 0,
    acted: [],
    me: null, // { kind, id } of the signed-in principal
    inboxGroups: new Map(), // group key -> { tasks, total, cursor }: the pages read of each
    inboxProjects: new Map(), // project -> how many wait on the viewer in it: the filter's choices
    inboxTotal: 0,
    inboxReady: false,
    inboxOffered: null, // whether the viewer is offered an inbox, once its kind is known
    inboxTimer: 0,
    inboxProject: "", // the inbox's project filter
    inboxPicked: new Set(), // held handoffs and results selected to act on together
    inboxDecision: "", // the decision chosen for the selected results
    inboxReason: "",
    inboxLoads: 0,
    mine: new Map(), // task id -> the move the panel sent on it (ownMove)
    lost: new Map(), // task id -> forms a live event removed, with what was typed in them
  };

  // The indicator, and while the board is not live (after it was), the stale banner: how
  // long since the server last said anything, counted every second.
  function status(state) {
    const el = $("live");
    const was = el.dataset.state;
    el.dataset.state = state;
    if (state === "live") app.lastHeard = null;
    if (state === "live" && app.loadFailed && app.loadFailed === app.project) {
      app.loadFailed = null;
      load(app.project);
    }
    else if ((state === "reconnecting" || state === "offline") && app.lastHeard == null) {
      app.lastHeard = app.live?.lastMessage || Date.now();
    }
    if (state !== was && state === "live" && app.staleSince != null) {
      metrics.reconnected = { ms: Date.now() - app.staleSince, at: performance.now() };
      app.staleSince = null;
    }
    if ((state === "reconnecting" || state === "offline") && app.staleSince == null) app.staleSince = Date.now();
    drawStatus();
  }

  function drawStatus() {
    const el = $("live");
    const state = el.dataset.state;
    const stale = (state === "reconnecting" || state === "offline") && app.lastHeard != null;
    const seconds = stale ? Math.max(0, Math.round((Date.now() - app.lastHeard) / 1000)) : 0;
    el.textContent = stale ? `${state} — last event ${seconds} s ago` : state;
    const banner = $("stale");
    const words = stale ? `${state}|${app.lastHeard}` : "";
    if (banner.dataset.words === words) return; // the banner is written once per loss
    banner.dataset.words = words;
    banner.hidden = !stale;
    if (!stale) return banner.replaceChildren();
    const at = new Date(app.lastHeard).toLocaleTimeString();
    banner.textContent = state === "offline"
      ? `You are offline. This board may be out of date: it last heard from the server at ${at}. It catches up by itself when the network is back.`
      : `The connection to the server is lost. This board may be out of date: it last heard from the server at ${at}. Reconnecting; it catches up by itself.`;
  }

  function notice(message, error = false) {
    const el = $("notice");
    el.hidden = !message;
    el.textContent = message || "";
    el.classList.toggle("error", error);
  }

  function updateCount() {
    const b = app.board;
    $("count").textContent = b.ready ? `${b.total} tasks` : "";
    $("find-shown").textContent = b.ready && b.filtered() ? `${b.shown} of ${b.cards.size} shown` : "";
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
    app.me = null;
    app.inboxGroups = new Map();
    app.inboxProjects = new Map();
    app.inboxPicked.clear();
    app.inboxTotal = 0;
    app.inboxReady = false;
    app.inboxOffered = null;
    drawInbox();
  }

  async function signIn(token) {
    performance.mark("board:token");
    app.signedAt = "board:token";
    try {
      app.me = (await gql(token, Q_ME)).me;
    } catch (error) {
      const message = error.code === "unauthenticated" ? "The server did not accept this token."
        : `Could not sign in: ${inWords(error)}.`;
      return askToken(message);
    }
    sessionStorage.setItem(TOKEN_KEY, token);
    app.token = token;
    $("token-dialog").close();
    $("sign-out").hidden = false;
    start();
  }

  function start() {
    loadVerbs().catch(() => {});
    gql(app.token, Q_STATES).then((d) => app.board.describe(d.task_states)).catch(() => {});
    const live = new Live(app.token, status, authFailed);
    app.live = live;
    const me = app.me ? Promise.resolve(app.me) : gql(app.token, Q_ME).then((d) => d.me);
    // the board first: the inbox is read once the project's tasks are drawn
    const board = app.project ? load(app.project) : Promise.resolve();
    Promise.all([me, board]).then(([who]) => {
      app.me = who;
      if (app.live === live && offerInbox(who.kind)) startInbox(live);
    }, (error) => error.code === "unauthenticated" && authFailed());
    if (!app.project) {
      notice("Choose a project to see its board.");
      suggestProjects();
      $("project").focus();
    }
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
  function headCursor(live, name = "head") {
    return new Promise((resolve, reject) => {
      gql(app.token, Q_PROBE).then((data) => {
        const any = data.tasks.edges[0]?.node;
        if (!any) return resolve("0");
        live.subscribe(name, S_HEAD, () => ({ task_id: any.id }), {
          once: true,
          next: (d) => { live.unsubscribe(name); resolve(d.task_events.cursor); },
          error: (errors) => { reject(new GraphQLError(errors)); return "stop"; },
        });
      }, reject);
    });
  }

  async function load(project) {
    const loadId = ++app.loadId;
    const live = app.live;
    const wanted = new URLSearchParams(location.search).get("task");
    live.unsubscribe("board");
    closeDetail();
    app.board.clear();
    app.cursor = null;
    updateCount();
    notice(`Loading ${project}…`);
    performance.mark("board:load:start");
    try {
      const pages = await gql(app.token, Q_COLUMNS, { project, last: COLUMN_PAGE });
      if (loadId !== app.loadId) return;
      // the counts are as of event_head: the events after it are the moves since
      app.cursor = pages.event_head;
      app.seen = new Set(pages.events_seen_after_head);
      app.board.render(pages);
      live.subscribe("board", S_EVENTS, () => ({ project, after: app.cursor }), {
        next: (data) => data.task_event_batches.forEach(onEvent),
        error: (errors) => notice(`Live updates interrupted (${errors[0]?.message}); resuming…`, true),
      });
      metrics.load = { tasks: app.board.cards.size, ms: measure("board:load", "board:load:start") };
      firstScreen();
      const total = app.board.total;
      const capped = [...app.board.columns.values()].some((c) => c.capped);
      if (!capped && total <= WHOLE && app.board.cards.size < total) {
        // a project this small is read whole, so that Find sees all of it
        const rest = [];
        let after = null;
        do {
          const data = await gql(app.token, Q_PAGE, { project, after });
          if (loadId !== app.loadId) return;
          const page = data.tasks;
          rest.push(...page.edges.map((e) => e.node));
          after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
        } while (after);
        app.board.fill(rest);
      }
      if (app.signedAt != null) {
        metrics.fromToken = { tasks: app.board.cards.size, ms: measure("board:from-token", app.signedAt) };
        app.signedAt = null;
      }
      notice(app.board.cards.size ? "" : `No tasks in ${project} yet; new ones appear here live.`);
      if (wanted) openDetail(wanted);
    } catch (error) {
      if (loadId !== app.loadId) return;
      if (error.code === "unauthenticated") return authFailed();
      notice(`Could not load the board: ${inWords(error)}. It is read again when the connection is back.`, true);
      app.loadFailed = project;
      live.connect(); // connected (again), the board is read again
    }
  }

  // The first screen painted: from the navigation (with the token kept in the tab) or from
  // the token given, to the frame after the first cards were drawn.
  function firstScreen() {
    const since = app.fromNavigation ? 0 : app.signedAt;
    app.fromNavigation = false;
    if (since == null) return;
    requestAnimationFrame(() => setTimeout(() => {
      if (metrics.firstScreen) return;
      metrics.firstScreen = {
        tasks: app.board.cards.size, total: app.board.total, from: since === 0 ? "navigation" : "token",
        ms: measure("board:first-screen", since),
      };
    }));
  }

  // A column's next page, when it is scrolled to its end or its "Show more" is pressed.
  async function moreOf(state) {
    const column = app.board.columns.get(state);
    if (!column?.before || column.reading) return;
    column.reading = true;
    const loadId = app.loadId;
    try {
      const data = await gql(app.token, Q_COLUMN_MORE, {
        project: app.project, state, before: column.before, last: COLUMN_PAGE,
      });
      if (loadId === app.loadId) app.board.more(state, data.tasks);
    } catch (error) {
      if (error.code === "unauthenticated") authFailed();
      else notice(`Could not read more of ${state}: ${inWords(error)}.`, true);
    } finally {
      column.reading = false;
    }
  }

  function onEvent(event) {
    if (!$("notice").hidden && $("notice").classList.contains("error")) notice("");
    metrics.events += 1;
    app.cursor = event.cursor;
    if (event.task) {
      // an event the first screen's counts already hold moves no count again
      if (!app.seen.delete(event.cursor)) {
        app.board.moved(event.kind === "created" ? null : event.from_state, event.to_state);
      }
      app.board.offer(event.task);
    }
    arrived(event.task_id, event.task?.version, event);
    refreshDetail(event.task_id);
  }

  async function openDetail(id, quiet = false) {
    const shown = app.openId === id ? $("timeline")?.timelineShown?.() : undefined;
    if (app.openId !== id) { actStatus(""); app.lost.clear(); }
    app.openId = id;
    app.board.select(id);
    setUrl({ task: id });
    const panel = $("detail");
    panel.hidden = false;
    if (!quiet) $("detail-body").replaceChildren(h("p", { class: "muted", text: "Loading…" }));
    try {
      const [data] = await Promise.all([gql(app.token, Q_DETAIL, { id }), loadVerbs()]);
      if (app.openId !== id) return;
      if (!data.task) {
        return $("detail-body").replaceChildren(h("p", { class: "muted", text: `No visible task ${id}.` }));
      }
      const typed = quiet ? typedInForms() : null;
      if (typed) keepLost(data.task, typed);
      const sent = app.mine.get(id);
      if (sent && ownMove(data.task, sent.verb)) done(id, data.task.as_protocol.state);
      const view = detailView(data.task, (next) => openDetail(next), shown);
      $("detail-body").replaceChildren(view);
      if (typed) restoreForms(typed);
      if (!quiet) $("detail-title")?.focus({ preventScroll: true });
    } catch (error) {
      if (error.code === "unauthenticated") return authFailed();
      if (app.openId !== id) return;
      $("detail-body").replaceChildren(h("p", { class: "error", role: "alert" },
        `Could not open this task: ${inWords(error)}. `,
        h("button", { type: "button", class: "resend", text: "Try again", onclick: () => openDetail(id) })));
    }
  }

  function closeDetail() {
    const was = app.openId;
    app.openId = null;
    actStatus("");
    if (app.board) app.board.select(null);
    $("detail").hidden = true;
    setUrl({ task: null });
    const card = was && app.board?.cards.get(was)?.el;
    if (card && document.activeElement?.closest?.("#detail")) card.focus({ preventScroll: true });
  }

  // A refresh redraws the forms; what the person had typed (and where) is kept.
  const formKey = (el) => {
    const verb = el.closest("form.verb")?.dataset.verb;
    const name = el.name || (el.dataset.criterion != null ? `c${el.dataset.criterion}` : `n${el.dataset.note}`);
    return verb ? `${verb}|${name}` : null;
  };

  function typedInForms() {
    const values = new Map();
    for (const el of document.querySelectorAll("#detail form.verb :is(input, select, textarea)")) {
      values.set(formKey(el), el.value);
    }
    const focused = document.activeElement?.closest?.("#detail form.verb") ? formKey(document.activeElement) : null;
    return { values, focused };
  }

  // Text typed into a form that the redrawn panel no longer has (a live event moved the
  // task) is kept, with why, in app.lost for detailView to show.
  function keepLost(task, { values }) {
    const allowed = new Set(task.allowed_verbs || []);
    const typed = new Map();
    for (const [key, value] of values) {
      const verb = key?.split("|")[0];
      if (!verb || allowed.has(verb) || !value.trim() || ownMove(task, verb)) continue;
      typed.set(verb, [...(typed.get(verb) || []), value.trim()]);
    }
    if (!typed.size) return;
    const last = task.events?.[task.events.length - 1];
    const kept = (app.lost.get(task.id) || []).filter((l) => !typed.has(l.verb));
    for (const [verb, texts] of typed) {
      kept.push({ verb, label: VERBS[verb]?.label || verb, typed: texts.join("\n"), state: task.as_protocol.state, actor: last?.actor });
    }
    app.lost.set(task.id, kept);
  }

  function restoreForms({ values, focused }) {
    for (const el of document.querySelectorAll("#detail form.verb :is(input, select, textarea)")) {
      const key = formKey(el);
      if (values.has(key)) el.value = values.get(key);
      if (key === focused) el.focus({ preventScroll: true });
    }
  }

  function refreshDetail(taskId) {
    if (taskId !== app.openId) return;
    clearTimeout(app.refresh);
    app.refresh = setTimeout(() => openDetail(app.openId, true), 250);
  }

  // ---- the inbox: what waits on the viewer, in every project, from the server -----------

  function why(task) {
    if (task.state === "approval") return "result waits for your decision";
    if (task.waiting_on === "owner_approval") return "handoff held for your approval";
    if (task.waiting_on === "human" || task.waiting_on === "agent") return "question waits for your answer";
    return task.waiting_on ? `waiting on ${task.waiting_on}` : task.state;
  }

  // The inbox as a work queue: grouped by what is asked, each group oldest waiting first and
  // paged by the server, narrowed to a project by the server; held handoffs can be approved,
  // and results decided, several at once.
  const ASKS = [
    { key: "decide", asked: "decide_result", title: "Results to decide" },
    { key: "approve", asked: "approve_handoff", title: "Handoffs to approve" },
    { key: "answer", asked: "answer", title: "Questions to answer" },
  ];
  const waitingSince = (t) => askedOf(t, t.events)?.at || t.updated_at;
  // A decision chosen once for every selected result, in the protocol's words.
  const DECISIONS = ["accept", "request_changes", "reject"];
  const DECIDED = { accept: "accepted", request_changes: "changes requested", reject: "rejected" };

  const inboxTasks = () => ASKS.flatMap((a) => app.inboxGroups.get(a.key)?.tasks || []);

  function inboxItem(t, selectable) {
    const asked = askedOf(t, t.events);
    const question = t.state === "waiting" && ["human", "agent"].includes(t.waiting_on) && asked?.note;
    const title = t.display_title || t.packet?.task || t.id;
    return h("li", { "data-id": t.id, class: selectable ? "selectable" : null },
      selectable ? h("input", { type: "checkbox", class: "pick", "data-pick": t.id, "aria-label": `select ${title}`,
        checked: app.inboxPicked.has(t.id) }) : null,
      h("button", { type: "button", class: "inbox-item", "data-open": t.id },
        h("span", { class: "t", text: title }),
        question ? h("span", { class: "q", text: `“${question}”` }) : null,
        h("span", { class: "m" },
          h("span", { class: "tag wait", text: why(t) }),
          h("span", { class: "tag", text: t.project }),
          h("span", { text: `${t.assignee}${t.requester ? ` for ${t.requester}` : ""}` }),
          since(waitingSince(t), "waiting "))));
  }

  // What a group lets the person do to several items at once.
  function bulkBar(key) {
    const all = h("button", { type: "button", class: "bulk-all", text: "Select all shown", "data-bulk": `all-${key}` });
    if (key === "approve") {
      return h("div", { class: "bulk" },
        h("button", { type: "button", class: "bulk-approve", text: "Approve selected", "data-bulk": "approve" }), all);
    }
    if (key === "decide") {
      const decision = h("select", { id: "bulk-decision", "aria-label": "Decision for the selected results" },
        h("option", { value: "", text: "choose a decision" }),
        DECISIONS.map((d) => h("option", { value: d, text: d })));
      decision.value = app.inboxDecision;
      const reason = h("input", { id: "bulk-reason", type: "text", "aria-label": "Reason for deciding the selected results",
        placeholder: "reason (optional)", value: app.inboxReason });
      return h("div", { class: "bulk" }, decision, reason,
        h("button", { type: "button", class: "bulk-decide", text: "Decide selected", "data-bulk": "decide" }), all);
    }
    return null;
  }

  function drawInbox() {
    $("inbox-count").textContent = String(app.inboxTotal);
    $("inbox-toggle").setAttribute("aria-label", `Inbox: ${app.inboxTotal} waiting on me`);
    // every project with something waiting on the viewer, with how many (the server's
    // counts); the one chosen stays a choice when nothing waits in it any more
    const projects = new Map(app.inboxProjects);
    if (app.inboxProject && !projects.has(app.inboxProject)) projects.set(app.inboxProject, 0);
    const filter = $("inbox-project");
    filter.replaceChildren(h("option", { value: "", text: `every project (${app.inboxTotal})` }),
      ...[...projects].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([p, n]) => h("option", { value: p, text: `${p} (${n})` })));
    filter.value = app.inboxProject;
    const groups = ASKS.map((a) => ({ ...a, ...app.inboxGroups.get(a.key) })).filter((g) => g.tasks?.length);
    $("inbox-list").dataset.project = app.inboxProject; // what it was read for
    $("inbox-list").replaceChildren(...(groups.length ? groups.map((g) => {
      const selectable = g.key === "approve" || g.key === "decide";
      const left = g.total - g.tasks.length;
      return h("section", { class: "inbox-group", "data-group": g.key, "aria-label": g.title },
        h("h3", { text: `${g.title} (${g.total})` }), bulkBar(g.key),
        h("ul", { class: "inbox-items" }, g.tasks.map((t) => inboxItem(t, selectable))),
        g.cursor ? h("button", { type: "button", class: "more", "data-more": g.key,
          text: `Show ${Math.max(1, Math.min(INBOX_PAGE, left))} more` }) : null);
    }) : [h("p", { class: "muted", text: app.inboxProject ? `Nothing waits on you in ${app.inboxProject}.` : "Nothing waits on you." })]));
  }

  const groupOf = (page) => ({
    tasks: page.edges.map((e) => e.node), total: page.total_count,
    cursor: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null,
  });

  // Reads the first page of each group again, as many items as the board holds of any group
  // (a page at least), for the project chosen.
  async function loadInbox() {
    const mine = ++app.inboxLoads;
    const held = Math.max(INBOX_PAGE, ...[...app.inboxGroups.values()].map((g) => g.tasks.length));
    const data = await gql(app.token, Q_INBOX, { project: app.inboxProject || null, first: Math.min(held, 500) });
    if (mine !== app.inboxLoads) return;
    app.inboxGroups = new Map(ASKS.map((a) => [a.key, groupOf(data[a.key])]));
    app.inboxTotal = data.all.total_count;
    app.inboxProjects = new Map(data.projects.map((p) => [p.project, p.count]));
    const shown = new Set(inboxTasks().map((t) => t.id));
    for (const id of app.inboxPicked) if (!shown.has(id)) app.inboxPicked.delete(id);
    app.inboxReady = true;
    drawInbox();
  }

  // The group's next page, from the server.
  async function moreInbox(key) {
    const group = app.inboxGroups.get(key);
    const ask = ASKS.find((a) => a.key === key);
    if (!group?.cursor || !ask) return;
    const mine = app.inboxLoads;
    const page = (await gql(app.token, Q_INBOX_MORE, {
      asked: ask.asked, project: app.inboxProject || null, after: group.cursor, first: INBOX_PAGE,
    })).inbox;
    if (mine !== app.inboxLoads) return; // read again meanwhile: that answer stands
    const next = groupOf(page);
    const have = new Set(group.tasks.map((t) => t.id));
    app.inboxGroups.set(key, { ...next, tasks: [...group.tasks, ...next.tasks.filter((t) => !have.has(t.id))] });
    drawInbox();
  }

  // Sends one move per selected item of a group, each with the version the inbox read it at,
  // all at once; each is done or refused on its own, and the outcome of each is listed.
  async function actOnSelected(key, verb, extra, doneWord) {
    const picked = (app.inboxGroups.get(key)?.tasks || []).filter((t) => app.inboxPicked.has(t.id));
    const out = $("inbox-outcome");
    out.hidden = false;
    const noun = key === "approve" ? "handoffs to approve" : "results to decide";
    if (!picked.length) return out.replaceChildren(h("p", { text: `Select the ${noun} first.` }));
    const doing = key === "approve" ? "Approving" : "Deciding";
    out.replaceChildren(h("p", { text: `${doing} ${picked.length}…` }));
    const results = await Promise.allSettled(picked.map((t) => {
      app.mine.set(t.id, { verb, version: t.version, done: false });
      return gql(app.token, MUTATIONS[verb], { task_id: t.id, expected_version: t.version, ...extra });
    }));
    const lines = results.map((r, i) => {
      const t = picked[i];
      const title = t.display_title || t.packet?.task || t.id;
      app.acted.push({ verb, task_id: t.id, ok: r.status === "fulfilled", code: r.reason?.code });
      if (r.status === "fulfilled") {
        app.inboxPicked.delete(t.id);
        return h("li", { class: "ok", "data-outcome": t.id }, h("span", { class: "tag ok", text: doneWord }), ` ${title}`);
      }
      app.mine.delete(t.id);
      const e = r.reason;
      const words = e.code === "conflict" ? "someone moved it since the inbox was read" : inWords(e);
      return h("li", { class: "bad", "data-outcome": t.id }, h("span", { class: "tag bad", text: "not done" }),
        ` ${title}: ${words} (${e.code || "error"})`);
    });
    const ok = results.filter((r) => r.status === "fulfilled").length;
    const did = key === "approve" ? "Approved" : `Decided (${doneWord})`;
    out.replaceChildren(h("p", { text: `${did} ${ok} of ${picked.length}.` }), h("ul", null, lines));
    loadInbox().catch(inboxFailed);
  }

  const approveSelected = () => actOnSelected("approve", "approve_handoff", {}, "approved");

  function decideSelected() {
    const decision = app.inboxDecision;
    if (!DECISIONS.includes(decision)) {
      const out = $("inbox-outcome");
      out.hidden = false;
      out.replaceChildren(h("p", { text: "Choose a decision for the selected results first." }));
      return $("bulk-decision")?.focus();
    }
    const reason = app.inboxReason.trim();
    return actOnSelected("decide", "decide_result", reason ? { decision, reason } : { decision }, DECIDED[decision]);
  }

  function inboxFailed(error) {
    if (error.code === "unauthenticated") return authFailed();
    $("inbox-list").replaceChildren(h("li", { class: "error" }, `Could not load the inbox: ${inWords(error)}. `,
      h("button", { type: "button", class: "resend", text: "Try again", onclick: () => loadInbox().catch(inboxFailed) })));
  }

  // A move of a task in the inbox, or into a state that waits on someone, reads it again.
  function onInboxEvent(event) {
    app.inboxEventCursor = event.cursor;
    arrived(event.task_id, event.version, event);
    refreshDetail(event.task_id);
    const mine = inboxTasks().some((t) => t.id === event.task_id);
    if (!mine && !["waiting", "approval"].includes(event.to_state)) return;
    clearTimeout(app.inboxTimer);
    app.inboxTimer = setTimeout(() => loadInbox().catch(inboxFailed), 150);
  }

  async function startInbox(live) {
    try {
      app.inboxEventCursor = await headCursor(live, "head-inbox");
      live.subscribe("inbox", S_INBOX, () => ({ after: app.inboxEventCursor }), {
        next: (data) => onInboxEvent(data.task_events),
      });
      await loadInbox();
    } catch (error) {
      inboxFailed(error);
    }
  }

  // The inbox is offered to people: an agent answers its questions through the API.
  function offerInbox(kind) {
    app.inboxOffered = kind === "person";
    $("inbox-toggle").hidden = kind !== "person";
    if (kind !== "person") showInbox(false);
    return kind === "person";
  }

  function showInbox(open) {
    $("inbox").hidden = !open;
    $("inbox-toggle").setAttribute("aria-expanded", String(open));
    setUrl({ inbox: open ? "1" : null });
  }

  // ---- find: the board filtered, the filter kept in the URL ------------------------------

  const FIND = { q: "find-text", assignee: "find-assignee", requester: "find-requester", state: "find-state" };

  function applyFind() {
    const filter = {};
    for (const [key, id] of Object.entries(FIND)) filter[key] = $(id).value.trim();
    app.board.setFilter(filter);
    setUrl(filter);
    updateCount();
  }

  function init() {
    app.board = new Board($("board"));
    app.board.onChange = updateCount;
    $("project").value = app.project;
    $("board").addEventListener("scroll", (e) => {
      const list = e.target.closest?.(".cards");
      if (list && list.scrollTop + list.clientHeight > list.scrollHeight - 300) moreOf(list.dataset.state);
    }, true);
    $("board").addEventListener("click", (e) => {
      const more = e.target.closest(".more-cards");
      if (more) return moreOf(more.dataset.moreState);
      const expand = e.target.closest(".expand");
      if (expand) {
        const open = expand.getAttribute("aria-expanded") !== "true";
        expand.setAttribute("aria-expanded", String(open));
        expand.textContent = open ? "less" : "more";
        expand.setAttribute("aria-label", `${expand.textContent} of the title`);
        expand.closest(".card").classList.toggle("expanded", open);
        return;
      }
      const card = e.target.closest(".card");
      if (card) openDetail(card.dataset.id);
    });
    $("board").addEventListener("keydown", (e) => {
      if (e.target.closest(".expand")) return;
      const card = e.target.closest(".card");
      if (card && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); openDetail(card.dataset.id); }
      if (card && ["ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) {
        const next = app.board.step(card, e.key);
        e.preventDefault();
        if (!next) return;
        app.board.rove(next);
        next.focus();
      }
    });
    $("board").addEventListener("focusin", (e) => {
      const card = e.target.closest(".card");
      if (card && card.dataset.id !== app.board.current) app.board.rove(card);
    });
    $("detail-close").addEventListener("click", closeDetail);
    const params = new URLSearchParams(location.search);
    $("find-state").append(...STATES.map((st) => h("option", { value: st, text: st })));
    for (const [key, id] of Object.entries(FIND)) $(id).value = params.get(key) || "";
    app.board.setFilter(Object.fromEntries(Object.keys(FIND).map((k) => [k, params.get(k) || ""])));
    let typing = 0;
    $("find").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(applyFind, 150); });
    $("find").addEventListener("change", applyFind);
    $("find").addEventListener("submit", (e) => { e.preventDefault(); applyFind(); });
    $("find-clear").addEventListener("click", () => {
      for (const id of Object.values(FIND)) $(id).value = "";
      applyFind();
    });
    $("inbox-toggle").addEventListener("click", () => showInbox($("inbox").hidden));
    $("inbox-list").addEventListener("click", (e) => {
      const more = e.target.closest("[data-more]")?.dataset.more;
      if (more) return moreInbox(more).catch(inboxFailed);
      const bulk = e.target.closest("[data-bulk]")?.dataset.bulk;
      if (bulk === "approve") return approveSelected();
      if (bulk === "decide") return decideSelected();
      if (bulk?.startsWith("all-")) {
        const group = $("inbox-list").querySelector(`[data-group=${bulk.slice(4)}]`);
        for (const box of group?.querySelectorAll("[data-pick]") || []) app.inboxPicked.add(box.dataset.pick);
        return drawInbox();
      }
      const id = e.target.closest("[data-open]")?.dataset.open;
      if (id) openDetail(id);
    });
    $("inbox-list").addEventListener("input", (e) => {
      if (e.target.id === "bulk-reason") app.inboxReason = e.target.value;
    });
    $("inbox-list").addEventListener("change", (e) => {
      if (e.target.id === "bulk-decision") app.inboxDecision = e.target.value;
      const id = e.target.dataset?.pick;
      if (!id) return;
      if (e.target.checked) app.inboxPicked.add(id); else app.inboxPicked.delete(id);
    });
    $("inbox-project").addEventListener("change", (e) => {
      app.inboxProject = e.target.value;
      app.inboxGroups = new Map(); // the first page of each group, in that project
      loadInbox().catch(inboxFailed);
    });
    if (params.get("inbox")) showInbox(true);
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && app.openId) return closeDetail();
      // "i": the inbox, its first item focused (not while typing, nor with a modifier)
      const typing = e.target.closest?.("input, textarea, select, [contenteditable], dialog");
      if (e.key === "i" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey && app.inboxOffered) {
        e.preventDefault();
        showInbox(true);
        ($("inbox-list").querySelector(".inbox-item") || $("inbox-toggle")).focus();
      }
    });
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
    setInterval(tick, 30000);
    setInterval(() => { if (app.lastHeard != null) drawStatus(); }, 1000);
    if (app.token) {
      performance.mark("board:token");
      app.signedAt = "board:token";
      app.fromNavigation = true; // the token kept in the tab: the page's navigation is the start
      $("sign-out").hidden = false;
      start();
    } else askToken();
  }

  // A small hook for tests and for debugging from the console.
  window.prickleBoard = {
    metrics,
    get cursor() { return app.cursor; },
    get status() { return $("live").dataset.state; },
    get connections() { return app.live?.connections ?? 0; },
    get size() { return app.board?.cards.size ?? 0; }, // the cards loaded
    get total() { return app.board?.total ?? 0; }, // the project's tasks, loaded or not
    stateOf: (id) => app.board?.cards.get(id)?.task.state ?? null,
    versionOf: (id) => app.board?.cards.get(id)?.task.version ?? null,
    get inbox() {
      if (app.inboxOffered === false) return []; // an agent's: decided, and empty
      return app.inboxReady ? inboxTasks().map((t) => t.id) : null;
    },
    get inboxTotal() { return app.inboxTotal; },
    get acted() { return app.acted; },
    get shown() { return app.board?.shown ?? 0; },
    // The connection lost and back, on demand: closed now, no reconnecting until resumed.
    pauseConnection: () => app.live?.pause(),
    resumeConnection: () => app.live?.resume(),
    open: (id) => openDetail(id),
  };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
