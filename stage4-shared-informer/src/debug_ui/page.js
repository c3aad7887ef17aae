// An informer's live page (/debug/ui of a stage 4 informer), after the shared
// frame (tools/live-page). Each `view` event carries every informer: the
// Reflector's phase, the queue, the indexer, the listeners and the deltas
// popped last. This script only draws them.

const INFORMER_TEXT = {
  en: {
    title: "The informer, live", reflector: "Reflector", phase: "phase",
    lastRv: "last synced RV", synced: "synced", yes: "yes", no: "not yet",
    queue: "Queue", queued: "queued", empty: "empty: the process loop keeps up",
    indexer: "Indexer", objects: "objects", index: "index", values: "values",
    listeners: "Listeners (one per handler)", pending: "pending", most: "most ever",
    resync: "resync every", never: "never", syncing: "syncing now", due: "resync due",
    popped: "Popped from the queue, newest first", initial: "initial list",
    phase_idle: "idle", phase_listing: "LIST", phase_streamingList: "WATCH-LIST",
    phase_watching: "WATCH", phase_backingOff: "BACKING OFF", phase_stopped: "stopped",
  },
  zh: {
    title: "实时观察 informer", reflector: "Reflector", phase: "阶段",
    lastRv: "最近同步的 RV", synced: "已同步", yes: "是", no: "尚未",
    queue: "队列", queued: "排队中", empty: "空：处理循环跟得上",
    indexer: "Indexer", objects: "个对象", index: "索引", values: "个值",
    listeners: "Listener（每个 handler 一个）", pending: "待处理", most: "最多",
    resync: "resync 周期", never: "无", syncing: "正在 resync", due: "resync 到期",
    popped: "从队列弹出，最新在前", initial: "初始 list",
    phase_idle: "空闲", phase_listing: "LIST", phase_streamingList: "WATCH-LIST",
    phase_watching: "WATCH", phase_backingOff: "退避中", phase_stopped: "已停止",
  },
};

let lastView = null;

const chip = (d) =>
  el("span", { class: `chip delta-${d.deltaType}` }, `${d.deltaType} ${d.resourceVersion}`);

function panel(cls, titleKey, extra) {
  const section = el("section", { class: `panel ${cls}` });
  const h2 = el("h2", {}, t(titleKey));
  if (extra) h2.append(" ", extra);
  section.append(h2);
  return section;
}

function reflectorPanel(v) {
  const p = panel("", "reflector");
  p.append(
    el("div", { class: "big phase", "data-phase": v.phase }, t(`phase_${v.phase}`)),
    el("div", { class: "caption" }, `${t("lastRv")}: `),
    el("div", { class: "caption" }, `${t("synced")}: ${v.hasSynced ? t("yes") : t("no")}`),
  );
  p.children[2].append(el("b", { "data-last-rv": "" }, v.lastSyncResourceVersion || "–"));
  return p;
}

function queuePanel(v) {
  const count = el("span", { class: "count", "data-queue-len": String(v.queue.len) }, String(v.queue.len));
  const p = panel("", "queue", count);
  p.querySelector("h2").prepend(`${v.queue.kind || "DeltaFIFO"} · `);
  const list = el("ol", { class: "queue" });
  for (const item of v.queue.items) {
    const li = el("li", { "data-key": item.key }, item.key + " ");
    for (const d of item.deltas) li.append(chip(d));
    list.append(li);
  }
  if (!v.queue.len) list.append(el("li", { class: "caption" }, t("empty")));
  p.append(list);
  return p;
}

function indexerPanel(v) {
  const p = panel("", "indexer");
  p.append(el("div", { class: "big", "data-indexer-len": String(v.indexer.len) }, String(v.indexer.len)));
  p.append(el("div", { class: "caption" }, t("objects")));
  for (const index of v.indexer.indexes) {
    const line = el("div", { class: "caption" }, `${t("index")} ${index.name}: ${index.values} ${t("values")} `);
    line.append(el("b", {}, index.top.map(([value, n]) => `${value || "∅"}×${n}`).join("  ")));
    p.append(line);
  }
  return p;
}

function listenersPanel(v) {
  const p = panel("wide", "listeners");
  const cards = el("div", { class: "watchers" });
  for (const l of v.listeners) {
    const card = el("div", { class: "watcher", "data-listener": String(l.id), "data-pending": String(l.pending) });
    card.append(el("div", { class: "what" }, `#${l.id}`));
    const meter = el("div", { class: "meter" });
    const bar = el("div");
    bar.style.width = `${Math.round((l.pending / Math.max(l.highWaterMark, 1)) * 100)}%`;
    meter.append(bar);
    card.append(el("div", {}, `${t("pending")} ${l.pending} · ${t("most")} ${l.highWaterMark}`), meter);
    const resync = l.resyncPeriodSecs ? secs(l.resyncPeriodSecs) : t("never");
    let flags = `${t("resync")} ${resync}`;
    if (l.isSyncing) flags += ` · ${t("syncing")}`;
    if (l.resyncDue) flags += ` · ${t("due")}`;
    card.append(el("div", {}, flags));
    cards.append(card);
  }
  p.append(cards);
  return p;
}

function poppedPanel(v) {
  const p = panel("wide", "popped");
  const list = el("ol", { class: "flow" });
  for (const popped of v.recent) {
    const li = el("li", { "data-key": popped.key });
    const chips = el("span", { class: "stages" });
    for (const d of popped.deltas) chips.append(chip(d));
    li.append(
      el("span", {}, clock(popped.atMs)),
      el("span", {}, popped.initial ? t("initial") : ""),
      el("span", {}, popped.key),
      chips,
    );
    list.append(li);
  }
  p.append(list);
  return p;
}

function drawView(view) {
  lastView = view;
  const root = $("informers");
  root.replaceChildren();
  for (const v of view.informers) {
    const section = el("div", { class: "informer", "data-informer": v.name });
    section.append(el("h2", { class: "informer-name" }, v.name));
    const grid = el("div", { class: "grid" });
    grid.append(reflectorPanel(v), queuePanel(v), indexerPanel(v), listenersPanel(v), poppedPanel(v));
    section.append(grid);
    root.append(section);
  }
}

livePage({
  text: INFORMER_TEXT,
  url: "/debug/ui/events",
  onView: drawView,
  redraw: () => lastView && drawView(lastView),
});
