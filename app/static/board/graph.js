// Prickle task graph: a task's ancestors, descendants and dependencies both ways, drawn as a
// directed graph (dagre lays it out, SVG draws it), nodes coloured by state and kept live by
// the task_events subscription. Plain JavaScript; dagre is served from /vendor.
//
//   PrickleGraph.show(container, taskId, { token, onOpen })  draws into `container`
//   PrickleGraph.open(taskId, { token, onOpen })             the same, in a view over the board
//
// Clicking a node (or Enter on it) calls onOpen(id). Both return { close, state(id), size }.
"use strict";

(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const NODE_W = 190;
  const NODE_H = 52;
  const Q_GRAPH = `query GraphView($task_id: ID!) { task_graph(task_id: $task_id) {
    root_id truncated edges { kind from_id to_id }
    tasks { id state waiting_on display_title packet { task } } } }`;
  const S_EVENTS = `subscription GraphEvents { task_events {
    cursor kind task_id to_state waiting_on task { parent_task_id packet { depends_on } } } }`;
  const FETCH_HINT = "python3 scripts/vendor.py (scripts/install.sh runs it)";

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    node.append(...children.flat(Infinity).filter((c) => c != null));
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v != null) node.setAttribute(k, v);
    node.append(...children.flat(Infinity).filter((c) => c != null));
    return node;
  }

  async function gql(token, query, variables) {
    const response = await fetch("/graphql", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = await response.json().catch(() => null);
    if (body?.errors?.length) {
      const e = body.errors[0];
      throw new Error(`${e.message} (${e.extensions?.code || "error"})`);
    }
    if (!response.ok || !body) throw new Error(`HTTP ${response.status}`);
    return body.data;
  }

  // One graphql-transport-ws subscription to every event the viewer may see, from now on;
  // on a dropped connection it reconnects with backoff and calls onResume (the view reads
  // the graph again, so nothing missed while away stays stale).
  class Events {
    constructor(token, onEvent, onResume) {
      Object.assign(this, { token, onEvent, onResume, ws: null, attempt: 0, stopped: false });
      this.connect();
    }

    connect() {
      if (this.stopped) return;
      const ws = new WebSocket(
        `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`,
        "graphql-transport-ws");
      this.ws = ws;
      ws.onopen = () => ws.send(JSON.stringify(
        { type: "connection_init", payload: { Authorization: `Bearer ${this.token}` } }));
      ws.onmessage = (message) => {
        let m;
        try { m = JSON.parse(message.data); } catch { return; }
        if (m.type === "connection_ack") {
          if (this.attempt > 0) this.onResume();
          this.attempt = 0;
          ws.send(JSON.stringify({ type: "subscribe", id: "graph", payload: { query: S_EVENTS } }));
        } else if (m.type === "ping") {
          ws.send(JSON.stringify({ type: "pong" }));
        } else if (m.type === "next" && m.payload?.data?.task_events) {
          this.onEvent(m.payload.data.task_events);
        }
      };
      ws.onclose = () => {
        if (this.stopped || ws !== this.ws) return;
        this.attempt += 1;
        setTimeout(() => this.connect(), Math.min(15000, 500 * 2 ** this.attempt));
      };
    }

    stop() {
      this.stopped = true;
      this.ws?.close(1000, "bye");
    }
  }

  function title(task) {
    return task.display_title || task.packet?.task || task.id;
  }

  function clip(text, max) {
    return text.length > max ? `${text.slice(0, max - 1)}…` : text;
  }

  function layout(graph) {
    const g = new dagre.graphlib.Graph({ multigraph: true });
    g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 56, marginx: 16, marginy: 16 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const t of graph.tasks) g.setNode(t.id, { width: NODE_W, height: NODE_H });
    for (const e of graph.edges) {
      // a parent above its subtasks; a dependency above what depends on it
      const [v, w] = e.kind === "parent" ? [e.from_id, e.to_id] : [e.to_id, e.from_id];
      g.setEdge(v, w, { kind: e.kind, minlen: 1, weight: e.kind === "parent" ? 2 : 1 }, e.kind);
    }
    dagre.layout(g);
    return g;
  }

  function draw(graph, onOpen) {
    const g = layout(graph);
    const { width, height } = g.graph();
    const marker = (id) => svg("marker", {
      id, viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "8", markerHeight: "8",
      orient: "auto-start-reverse",
    }, svg("path", { d: "M0,0 L10,5 L0,10 z" }));
    const edges = graph.edges.map((e) => {
      const [v, w] = e.kind === "parent" ? [e.from_id, e.to_id] : [e.to_id, e.from_id];
      const points = g.edge({ v, w, name: e.kind }).points;
      const d = points.map((p, i) => `${i ? "L" : "M"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
      // depends_on points from the task to its dependency: drawn w→v, arrow at the start
      return svg("path", {
        class: `edge ${e.kind}`, d, "data-kind": e.kind, "data-from": e.from_id, "data-to": e.to_id,
        "marker-end": e.kind === "parent" ? "url(#graph-arrow)" : null,
        "marker-start": e.kind === "depends_on" ? "url(#graph-arrow-dep)" : null,
      });
    });
    const nodes = graph.tasks.map((t) => {
      const { x, y } = g.node(t.id);
      const name = title(t);
      const shown = clip(name, 26);
      // the accessible name is the visible text itself; the tooltip has the whole title
      const node = svg("g", {
        class: `node${t.id === graph.root_id ? " root" : ""}`, "data-id": t.id, "data-state": t.state,
        "data-name": shown, transform: `translate(${x - NODE_W / 2},${y - NODE_H / 2})`,
        tabindex: "0", role: "button", "aria-label": `${shown} ${t.state}`,
      },
      svg("title", null, name),
      svg("rect", { width: NODE_W, height: NODE_H, rx: "8" }),
      svg("text", null,
        svg("tspan", { x: "10", y: "21", class: "name" }, shown), " ",
        svg("tspan", { x: "10", y: "40", class: "state" }, t.state)));
      const open = () => onOpen?.(t.id);
      node.addEventListener("click", open);
      node.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); }
      });
      return node;
    });
    return svg("svg", {
      class: "graph-drawing", width: String(Math.ceil(width)), height: String(Math.ceil(height)),
      viewBox: `0 0 ${Math.ceil(width)} ${Math.ceil(height)}`, role: "group",
      "aria-label": `${graph.tasks.length} tasks, ${graph.edges.length} edges`,
    },
    svg("defs", null, marker("graph-arrow"), marker("graph-arrow-dep")),
    svg("g", { class: "edges" }, edges), svg("g", { class: "nodes" }, nodes));
  }

  function legend() {
    return el("p", { class: "graph-legend" },
      el("span", { class: "key parent", text: "parent → subtask" }),
      el("span", { class: "key depends_on", text: "task ⇢ what it depends on" }));
  }

  function show(container, taskId, { token, onOpen } = {}) {
    const stage = el("div", { class: "graph-stage" });
    const status = el("p", { class: "graph-status", role: "status", text: "Loading the graph…" });
    container.replaceChildren(status, legend(), stage);
    const view = { graph: null, events: null, timer: 0, closed: false, loads: 0 };

    if (typeof dagre === "undefined") {
      status.textContent = `The graph view's layout library (dagre) is not installed on this `
        + `server. Fetch it with ${FETCH_HINT}.`;
      status.classList.add("error");
      return { close() {}, state: () => null, get size() { return 0; } };
    }

    async function load() {
      const mine = ++view.loads;
      try {
        const data = await gql(token, Q_GRAPH, { task_id: taskId });
        if (view.closed || mine !== view.loads) return;
        const graph = data.task_graph;
        if (!graph) { status.textContent = `No visible task ${taskId}.`; return; }
        view.graph = graph;
        view.ids = new Set(graph.tasks.map((t) => t.id));
        const first = !stage.firstChild;
        stage.replaceChildren(draw(graph, onOpen));
        if (first) stage.querySelector(".node.root")?.scrollIntoView({ block: "nearest", inline: "center" });
        status.textContent = `${graph.tasks.length} tasks, ${graph.edges.length} edges`
          + (graph.truncated ? " (more tasks than shown)" : "");
        status.classList.remove("error");
      } catch (error) {
        status.textContent = `Could not read the graph: ${error.message}`;
        status.classList.add("error");
      }
    }

    function reload() {
      clearTimeout(view.timer);
      view.timer = setTimeout(load, 200);
    }

    function onEvent(e) {
      if (!view.graph) return;
      const known = view.ids.has(e.task_id);
      if (known) {
        const node = stage.querySelector(`.node[data-id="${CSS.escape(e.task_id)}"]`);
        if (node && e.to_state) {
          node.dataset.state = e.to_state;
          node.querySelector("tspan.state").textContent = e.to_state;
          node.setAttribute("aria-label", `${node.dataset.name} ${e.to_state}`);
        }
        return;
      }
      // a new task joins the graph when its parent or a dependency is in it
      const linked = [e.task?.parent_task_id, ...(e.task?.packet?.depends_on || [])]
        .some((id) => id && view.ids.has(id));
      if (linked) reload();
    }

    load();
    view.events = new Events(token, onEvent, reload);
    return {
      close() { view.closed = true; clearTimeout(view.timer); view.events?.stop(); },
      state: (id) => stage.querySelector(`.node[data-id="${CSS.escape(id)}"]`)?.dataset.state ?? null,
      get size() { return stage.querySelectorAll(".node").length; },
      reload: load,
    };
  }

  // The graph in a view of its own over the board (the detail panel stays beside it).
  let current = null;

  function open(taskId, options = {}) {
    close();
    const host = document.querySelector(".workspace") || document.body;
    const body = el("div", { class: "graph-body" });
    const heading = el("h2", { id: "graph-heading", text: "Task graph" });
    const closer = el("button", { type: "button", class: "graph-close", "aria-label": "close the graph", text: "×", onclick: close });
    const section = el("section", { class: "graph-view", "aria-labelledby": "graph-heading" },
      el("header", { class: "graph-bar" }, heading, closer), body);
    section.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { e.stopPropagation(); close(); }
    });
    host.prepend(section);
    host.classList.add("graphing");
    // on a narrow screen the graph and the detail panel each take the whole screen: opening
    // a node closes the graph, so that the panel shows
    const narrow = window.matchMedia("(max-width: 900px)");
    const onOpen = (id) => { if (narrow.matches) close(); options.onOpen?.(id); };
    const view = show(body, taskId, { ...options, onOpen });
    current = { section, host, view };
    closer.focus();
    return view;
  }

  function close() {
    if (!current) return;
    current.view.close();
    current.section.remove();
    current.host.classList.remove("graphing");
    current = null;
  }

  window.PrickleGraph = {
    show,
    open,
    close,
    get current() { return current?.view ?? null; },
  };
})();
