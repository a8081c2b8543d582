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
  const NODE_W = 250;
  const NODE_H = 58;
  const Q_GRAPH = `query GraphView($task_id: ID!) { task_graph(task_id: $task_id) {
    root_id truncated edges { kind from_id to_id }
    tasks { id state waiting_on display_title packet { task } } } }`;
  const S_EVENTS = `subscription GraphEvents { task_events {
    cursor kind task_id to_state waiting_on task { parent_task_id packet { depends_on } } } }`;
  const FETCH_HINT = "python3 scripts/vendor.py (scripts/install.sh runs it)";
  // Subtasks with no subtasks or dependencies of their own ("leaves"), when a task has more
  // than GRID_AFTER of them, are laid out as a grid under it shaped like the view, in
  // compact nodes with a larger type: so the graph fits the view, and its labels stay
  // readable, where one row of 199 would be 40,000 px wide.
  const GRID_AFTER = 6;
  const LEAF_W = 118;
  const LEAF_H = 30;
  const GAP_X = 8;
  const GAP_Y = 12;
  // Every label is set in 16 px type (graph.css); the view never fits the graph at a zoom
  // that draws it smaller than 12 px on screen: past that, it fits the width and scrolls
  // (drag, wheel, the arrows; a node that takes the focus is brought into view).
  const LABEL_PX = 16;
  const READABLE = 12 / LABEL_PX;
  const MARGIN = 16; // dagre's marginx
  const MIN_ZOOM = 0.08;
  const MAX_ZOOM = 3;
  const STEP = 1.25;

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

  // The layout: { width, height, at(id) -> {x, y, w, h, leaf}, points(edge) -> [{x, y}] }.
  // `view`: the stage's size in pixels, which a grid of subtasks is shaped for: like the view,
  // or, where the graph so shaped would not show whole at a readable size, as wide as the
  // view is at that size (so that it scrolls one way only, down).
  function layout(graph, view) {
    const shaped = layoutFor(graph, view, false);
    const whole = Math.min(view.w / shaped.width, view.h / shaped.height);
    return whole >= READABLE || !shaped.grids ? shaped : layoutFor(graph, view, true);
  }

  function layoutFor(graph, view, wide) {
    const aspect = view.w / view.h;
    const linked = new Set(graph.edges.filter((e) => e.kind === "depends_on").flatMap((e) => [e.from_id, e.to_id]));
    const hasChildren = new Set(graph.edges.filter((e) => e.kind === "parent").map((e) => e.from_id));
    const leavesOf = new Map();
    for (const e of graph.edges) {
      if (e.kind !== "parent" || hasChildren.has(e.to_id) || linked.has(e.to_id) || e.to_id === graph.root_id) continue;
      leavesOf.set(e.from_id, [...(leavesOf.get(e.from_id) || []), e.to_id]);
    }
    const grids = new Map(); // parent -> { leaves, cols, rows }
    const inGrid = new Map(); // leaf -> parent
    for (const [parent, leaves] of leavesOf) {
      if (leaves.length <= GRID_AFTER) continue;
      const cellW = LEAF_W + GAP_X;
      const cellH = LEAF_H + GAP_Y;
      const cols = Math.max(1, Math.min(leaves.length, wide
        ? Math.floor((view.w / READABLE - 2 * MARGIN + GAP_X) / cellW)
        : Math.round(Math.sqrt((leaves.length * aspect * cellH) / cellW))));
      grids.set(parent, { leaves, cols, rows: Math.ceil(leaves.length / cols) });
      for (const leaf of leaves) inGrid.set(leaf, parent);
    }
    const g = new dagre.graphlib.Graph({ multigraph: true });
    g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 56, marginx: MARGIN, marginy: MARGIN });
    g.setDefaultEdgeLabel(() => ({}));
    for (const t of graph.tasks) if (!inGrid.has(t.id)) g.setNode(t.id, { width: NODE_W, height: NODE_H });
    for (const [parent, grid] of grids) {
      g.setNode(`grid ${parent}`, {
        width: grid.cols * (LEAF_W + GAP_X) - GAP_X, height: grid.rows * (LEAF_H + GAP_Y) - GAP_Y,
      });
      g.setEdge(parent, `grid ${parent}`, { minlen: 1, weight: 2 }, "grid");
    }
    for (const e of graph.edges) {
      if (inGrid.has(e.to_id) && e.kind === "parent") continue;
      // a parent above its subtasks; a dependency above what depends on it
      const [v, w] = e.kind === "parent" ? [e.from_id, e.to_id] : [e.to_id, e.from_id];
      g.setEdge(v, w, { kind: e.kind, minlen: 1, weight: e.kind === "parent" ? 2 : 1 }, e.kind);
    }
    dagre.layout(g);
    const places = new Map();
    for (const t of graph.tasks) {
      if (!inGrid.has(t.id)) places.set(t.id, { ...g.node(t.id), w: NODE_W, h: NODE_H, leaf: false });
    }
    for (const [parent, grid] of grids) {
      const box = g.node(`grid ${parent}`);
      const left = box.x - box.width / 2;
      const top = box.y - box.height / 2;
      grid.leaves.forEach((id, i) => {
        const col = i % grid.cols;
        const row = Math.floor(i / grid.cols);
        places.set(id, {
          x: left + col * (LEAF_W + GAP_X) + LEAF_W / 2, y: top + row * (LEAF_H + GAP_Y) + LEAF_H / 2,
          w: LEAF_W, h: LEAF_H, leaf: true,
        });
      });
    }
    const points = (e) => {
      const [v, w] = e.kind === "parent" ? [e.from_id, e.to_id] : [e.to_id, e.from_id];
      if (!(e.kind === "parent" && inGrid.has(e.to_id))) return g.edge({ v, w, name: e.kind }).points;
      // to a subtask in a grid: down from the parent, along the gap above the subtask's row
      const from = places.get(v);
      const to = places.get(w);
      const lane = to.y - LEAF_H / 2 - GAP_Y / 2;
      return [{ x: from.x, y: from.y + from.h / 2 }, { x: from.x, y: lane }, { x: to.x, y: lane }, { x: to.x, y: to.y - LEAF_H / 2 }];
    };
    const { width, height } = g.graph();
    const gridEdge = (e) => e.kind === "parent" && inGrid.has(e.to_id);
    return { width, height, at: (id) => places.get(id), points, gridEdge, grids: grids.size };
  }

  function draw(graph, onOpen, view) {
    const g = layout(graph, view);
    const { width, height } = g;
    const marker = (id) => svg("marker", {
      id, viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "12", markerHeight: "12",
      markerUnits: "userSpaceOnUse", // the same arrow on a highlighted (thicker) edge
      orient: "auto-start-reverse",
    }, svg("path", { d: "M0,0 L10,5 L0,10 z" }));
    const edges = graph.edges.map((e) => {
      const points = g.points(e);
      const d = points.map((p, i) => `${i ? "L" : "M"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
      // depends_on points from the task to its dependency: drawn w→v, arrow at the start
      return svg("path", {
        class: `edge ${e.kind}${g.gridEdge(e) ? " grid-leaf" : ""}`, d, "data-kind": e.kind, "data-from": e.from_id, "data-to": e.to_id,
        "marker-end": e.kind === "parent" ? "url(#graph-arrow)" : null,
        "marker-start": e.kind === "depends_on" ? "url(#graph-arrow-dep)" : null,
      });
    });
    const nodes = graph.tasks.map((t) => {
      const { x, y, w, h, leaf } = g.at(t.id);
      const name = title(t);
      const shown = clip(name, leaf ? 12 : 24);
      // the accessible name is the visible text itself; the tooltip has the whole title
      const node = svg("g", {
        class: `node${t.id === graph.root_id ? " root" : ""}${leaf ? " leaf" : ""}`, "data-id": t.id, "data-state": t.state,
        "data-name": shown, transform: `translate(${x - w / 2},${y - h / 2})`,
        tabindex: "0", role: "button", "aria-label": `${shown} ${t.state}`,
      },
      svg("title", null, `${name} (${t.state})`),
      svg("rect", { width: w, height: h, rx: "8" }),
      leaf ? svg("text", null, svg("tspan", { x: "7", y: "21", class: "name" }, shown),
        svg("tspan", { class: "state" }, t.state))
        : svg("text", null,
          svg("tspan", { x: "10", y: "23", class: "name" }, shown), " ",
          svg("tspan", { x: "10", y: "46", class: "state" }, t.state)));
      const open = () => onOpen?.(t.id);
      node.addEventListener("click", open);
      node.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); }
      });
      return node;
    });
    const drawing = svg("svg", {
      class: "graph-drawing", width: "100%", height: "100%", "data-width": String(Math.ceil(width)),
      "data-height": String(Math.ceil(height)), preserveAspectRatio: "xMidYMid meet",
      viewBox: `0 0 ${Math.ceil(width)} ${Math.ceil(height)}`, role: "group",
      "aria-label": `${graph.tasks.length} tasks, ${graph.edges.length} edges`,
    },
    svg("defs", null, marker("graph-arrow"), marker("graph-arrow-dep")),
    svg("g", { class: "edges" }, edges), svg("g", { class: "nodes" }, nodes));
    return { svg: drawing, at: g.at };
  }

  function legend() {
    return el("p", { class: "graph-legend" },
      el("span", { class: "key parent", text: "parent → subtask" }),
      el("span", { class: "key depends_on", text: "task ⇢ what it depends on" }));
  }

  // The chosen task's path: its parents up to the top of the graph, and the shortest way
  // from the task the graph was opened on to it (either direction of any edge).
  function pathOf(graph, chosen) {
    const parentOf = new Map(graph.edges.filter((e) => e.kind === "parent").map((e) => [e.to_id, e.from_id]));
    const near = new Map(graph.tasks.map((t) => [t.id, []]));
    for (const e of graph.edges) {
      near.get(e.from_id)?.push(e.to_id);
      near.get(e.to_id)?.push(e.from_id);
    }
    const steps = new Set();
    const key = (a, b) => (a < b ? `${a} ${b}` : `${b} ${a}`);
    for (let at = chosen, up = parentOf.get(at); up && !steps.has(key(at, up)); at = up, up = parentOf.get(up)) {
      steps.add(key(at, up));
    }
    const from = new Map([[graph.root_id, null]]);
    for (const queue = [graph.root_id]; queue.length && !from.has(chosen);) {
      const at = queue.shift();
      for (const next of near.get(at) || []) if (!from.has(next)) { from.set(next, at); queue.push(next); }
    }
    for (let at = chosen; from.get(at) != null; at = from.get(at)) steps.add(key(at, from.get(at)));
    const nodes = new Set([chosen, ...[...steps].flatMap((k) => k.split(" "))]);
    return { nodes, edge: (e) => steps.has(key(e.from_id, e.to_id)) };
  }

  // Zoom and pan by the drawing's viewBox: wheel (around the pointer), drag, the buttons,
  // and the keys + - 0 and the arrows.
  class Camera {
    constructor(stage) {
      this.stage = stage;
      this.box = null;
    }

    get drawing() { return this.stage.querySelector("svg.graph-drawing"); }

    set(box) {
      this.box = box;
      this.drawing?.setAttribute("viewBox", [box.x, box.y, box.w, box.h].map((v) => v.toFixed(1)).join(" "));
    }

    get zoom() { return this.box ? this.stage.clientWidth / this.box.w : 1; }

    // The whole drawing in the view, centred (never enlarged past 1.5), where its labels
    // read at 12 px or more so; else as wide as the view at a readable size at least, from
    // the top (centred on `at`, the task it was opened on, when even that is too wide).
    fit(at) {
      const svgEl = this.drawing;
      if (!svgEl) return;
      const W = +svgEl.dataset.width;
      const H = +svgEl.dataset.height;
      const cw = Math.max(this.stage.clientWidth, 1);
      const ch = Math.max(this.stage.clientHeight, 1);
      const whole = Math.min(cw / W, ch / H, 1.5);
      if (whole >= READABLE) {
        this.set({ x: W / 2 - cw / whole / 2, y: H / 2 - ch / whole / 2, w: cw / whole, h: ch / whole });
        return;
      }
      const k = Math.min(Math.max(cw / W, READABLE), 1.5);
      const x = W * k <= cw ? W / 2 - cw / k / 2 : Math.min(Math.max((at?.x ?? W / 2) - cw / k / 2, 0), W - cw / k);
      this.set({ x, y: 0, w: cw / k, h: ch / k });
    }

    // Brings a node into view (by panning) when it lies outside it.
    reveal(node) {
      const s = this.stage.getBoundingClientRect();
      const b = node.getBoundingClientRect();
      const dx = b.left < s.left ? s.left - b.left + 8 : b.right > s.right ? s.right - b.right - 8 : 0;
      const dy = b.top < s.top ? s.top - b.top + 8 : b.bottom > s.bottom ? s.bottom - b.bottom - 8 : 0;
      if (dx || dy) this.panBy(dx, dy);
    }

    zoomBy(f, at) {
      const b = this.box;
      if (!b) return;
      const k = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, this.zoom * f));
      const g = this.zoom / k;
      const p = at || { x: b.x + b.w / 2, y: b.y + b.h / 2 };
      this.set({ x: p.x - (p.x - b.x) * g, y: p.y - (p.y - b.y) * g, w: b.w * g, h: b.h * g });
    }

    panBy(dx, dy) {  // in screen pixels
      const b = this.box;
      if (!b) return;
      const k = this.zoom;
      this.set({ ...b, x: b.x - dx / k, y: b.y - dy / k });
    }

    point(event) {  // a pointer's place in the drawing's coordinates
      const r = this.stage.getBoundingClientRect();
      const b = this.box;
      return { x: b.x + (event.clientX - r.left) / this.zoom, y: b.y + (event.clientY - r.top) / this.zoom };
    }

    listen() {
      const stage = this.stage;
      stage.addEventListener("wheel", (e) => {
        if (!this.box) return;
        e.preventDefault();
        this.zoomBy(e.deltaY < 0 ? STEP : 1 / STEP, this.point(e));
      }, { passive: false });
      let drag = null;
      stage.addEventListener("pointerdown", (e) => {
        if (e.button === 0) drag = { x: e.clientX, y: e.clientY, moved: false };
      });
      stage.addEventListener("pointermove", (e) => {
        if (!drag) return;
        const dx = e.clientX - drag.x;
        const dy = e.clientY - drag.y;
        if (!drag.moved && Math.hypot(dx, dy) < 4) return;
        drag.moved = true;
        stage.classList.add("panning");
        this.panBy(dx, dy);
        drag.x = e.clientX;
        drag.y = e.clientY;
      });
      const end = () => { stage.classList.remove("panning"); setTimeout(() => { drag = null; }); };
      stage.addEventListener("pointerup", end);
      stage.addEventListener("pointerleave", end);
      // a drag is not a click on the node it started on
      stage.addEventListener("click", (e) => { if (drag?.moved) e.stopPropagation(); }, true);
    }

    key(e) {
      const pan = { ArrowLeft: [60, 0], ArrowRight: [-60, 0], ArrowUp: [0, 60], ArrowDown: [0, -60] }[e.key];
      if (pan) this.panBy(...pan);
      else if (e.key === "+" || e.key === "=") this.zoomBy(STEP);
      else if (e.key === "-") this.zoomBy(1 / STEP);
      else if (e.key === "0") this.fit(this.home);
      else return false;
      return true;
    }
  }

  function show(container, taskId, { token, onOpen } = {}) {
    const stage = el("div", { class: "graph-stage" });
    const camera = new Camera(stage);
    camera.listen();
    const status = el("p", { class: "graph-status", role: "status", text: "Loading the graph…" });
    container.replaceChildren(status, legend(), stage);
    const view = { graph: null, events: null, timer: 0, closed: false, loads: 0, chosen: taskId };

    function choose(id) {
      view.chosen = id;
      if (!view.graph) return;
      const path = pathOf(view.graph, id);
      for (const node of stage.querySelectorAll(".node")) {
        node.classList.toggle("on-path", path.nodes.has(node.dataset.id));
        node.classList.toggle("chosen", node.dataset.id === id);
      }
      for (const edge of stage.querySelectorAll(".edge")) {
        edge.classList.toggle("on-path", path.edge({ from_id: edge.dataset.from, to_id: edge.dataset.to }));
      }
    }

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
        const kept = camera.box;
        const size = { w: Math.max(stage.clientWidth, 1), h: Math.max(stage.clientHeight, 1) };
        const drawn = draw(graph, (id) => { choose(id); onOpen?.(id); }, size);
        stage.replaceChildren(drawn.svg);
        camera.home = drawn.at(graph.root_id);
        if (first || !kept) camera.fit(camera.home); else camera.set(kept);
        choose(view.ids.has(view.chosen) ? view.chosen : graph.root_id);
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

    stage.addEventListener("focusin", (e) => {
      const node = e.target.closest?.(".node");
      if (!node) return;
      camera.reveal(node); // a node reached by Tab beyond the view comes into it
      choose(node.dataset.id);
    });
    const loaded = load();
    view.events = new Events(token, onEvent, reload);
    return {
      loaded,
      camera,
      choose,
      get chosen() { return view.chosen; },
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
    const returnTo = document.activeElement; // where the focus goes back to, without a card
    const host = document.querySelector(".workspace") || document.body;
    const body = el("div", { class: "graph-body" });
    const heading = el("h2", { id: "graph-heading", text: "Task graph" });
    const closer = el("button", { type: "button", class: "graph-close", "aria-label": "close the graph", text: "×", onclick: close });
    const camera = () => current?.view.camera;
    const tools = el("div", { class: "graph-tools", role: "group", "aria-label": "zoom" },
      el("button", { type: "button", text: "+", "aria-label": "zoom in", onclick: () => camera()?.zoomBy(STEP) }),
      el("button", { type: "button", text: "−", "aria-label": "zoom out", onclick: () => camera()?.zoomBy(1 / STEP) }),
      el("button", { type: "button", text: "Fit", "aria-label": "fit the graph to the view", onclick: () => { const c = camera(); c?.fit(c.home); } }));
    // the board's <main> is hidden while the graph shows: the graph is the page's main part
    const section = el("section", { class: "graph-view", role: "main", "aria-labelledby": "graph-heading" },
      el("header", { class: "graph-bar" }, heading, el("span", { class: "graph-keys", text: "wheel or + − to zoom, drag or arrows to pan, 0 to fit" }), tools, closer), body);
    section.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { e.stopPropagation(); close(); return; }
      if (e.ctrlKey || e.metaKey || e.altKey || e.target.closest("input, textarea, select")) return;
      if (camera()?.key(e)) e.preventDefault();
    });
    host.prepend(section);
    host.classList.add("graphing");
    // on a narrow screen the graph and the detail panel each take the whole screen: opening
    // a node closes the graph, so that the panel shows
    const narrow = window.matchMedia("(max-width: 900px)");
    const onOpen = (id) => { if (narrow.matches) close(); options.onOpen?.(id); };
    const view = show(body, taskId, { ...options, onOpen });
    current = { section, host, view, returnTo };
    closer.focus();
    return view;
  }

  // Closing gives the focus back: to the chosen task's card on the board, else to what
  // opened the graph (the panel's Graph button), never to the page's body.
  function close() {
    if (!current) return;
    const { view, section, host, returnTo } = current;
    const hadFocus = section.contains(document.activeElement);
    view.close();
    section.remove();
    host.classList.remove("graphing");
    current = null;
    if (!hadFocus) return;
    const card = view.chosen && document.querySelector(`.card[data-id="${CSS.escape(view.chosen)}"]`);
    const back = card && card.offsetParent !== null ? card : returnTo?.isConnected ? returnTo : null;
    back?.focus();
  }

  window.PrickleGraph = {
    show,
    open,
    close,
    get current() { return current?.view ?? null; },
  };
})();
