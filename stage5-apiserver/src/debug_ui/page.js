// The live page of mini-apiserver's watch machinery (/debug/ui), after the
// shared frame (tools/live-page). One server-sent event stream brings `view`
// events (the state of one resource's watch cache) and `note` events (each
// moment as it happens); this script only draws them. Nothing here polls.

const SERVER_TEXT = {
  en: {
    title: "The watch, live", resource: "Resource", etcdRevision: "current revision",
    cacheRv: "watch cache at", ring: "The watch cache's ring",
    budget: "Dispatch time budget", dispatched: "events dispatched",
    closedSlow: "closed as too slow", flow: "Events: etcd → watch cache → dispatch",
    watchers: "cacheWatchers", moments: "Requests and moments",
    capacity: "capacity", held: "events held", oldest: "oldest RV a watch may ask",
    newest: "newest RV", window: "window", resizes: "resizes", bounds: "size bounds",
    noCache: "No watch cache: every watch is its own etcd watch.",
    buffer: "buffer", bookmarks: "bookmarks", age: "age", endsIn: "ends in",
    trigger: "trigger", stageEtcd: "etcd", stageCache: "watchCache",
    stageDispatch: "dispatched", ended: "ended",
    reason_timeout: "timeoutSeconds passed", reason_slow: "buffer full past the time budget: closed",
    reason_clientGone: "client went away", reason_relist: "cache relisted: closed",
    reason_stopped: "cache stopped",
    added: "watcher #{id} registered", expired: "410 Expired: asked for RV {rv}",
    relisted: "watch cache relisted at RV {rv}", resized: "ring resized {from} → {to}",
    bookmark: "bookmark at RV {rv} to {n} watcher(s)",
    endedNote: "watcher #{id} ended: {reason}",
    more: "and {n} more (the fullest buffers are shown)",
  },
  zh: {
    title: "实时观察 watch", resource: "资源", etcdRevision: "当前 revision",
    cacheRv: "watch cache 已到", ring: "watch cache 的环形缓冲",
    budget: "分发时间预算", dispatched: "已分发事件",
    closedSlow: "因太慢被关闭", flow: "事件：etcd → watch cache → 分发",
    watchers: "cacheWatcher", moments: "请求与时刻",
    capacity: "容量", held: "持有事件", oldest: "可 watch 的最旧 RV",
    newest: "最新 RV", window: "时间窗口", resizes: "调整大小次数", bounds: "大小范围",
    noCache: "没有 watch cache：每个 watch 都是一个独立的 etcd watch。",
    buffer: "缓冲", bookmarks: "书签", age: "已打开", endsIn: "剩余",
    trigger: "触发值", stageEtcd: "etcd", stageCache: "watchCache",
    stageDispatch: "已分发", ended: "已结束",
    reason_timeout: "timeoutSeconds 已到", reason_slow: "缓冲区满且超出时间预算：被关闭",
    reason_clientGone: "客户端已离开", reason_relist: "缓存重新 list：被关闭",
    reason_stopped: "缓存已停止",
    added: "watcher #{id} 已注册", expired: "410 Expired：请求的 RV 为 {rv}",
    relisted: "watch cache 在 RV {rv} 重新 list", resized: "环形缓冲调整 {from} → {to}",
    bookmark: "RV {rv} 的书签发给 {n} 个 watcher",
    endedNote: "watcher #{id} 已结束：{reason}",
    more: "另有 {n} 个（只显示缓冲最满的）",
  },
};

let resource = params.get("resource") || "pods";
const FLOW_ROWS = 10;
const MOMENTS = 14;
const ENDED_KEEP_MS = 60000;
const ENDED_SHOWN = 12;

let lastView = null;
const identifiers = new Map();
const ended = new Map();

function shortIdentifier(identifier) {
  const key = /key: "([^"]*)"/.exec(identifier);
  const labels = /labels: "([^"]*)"/.exec(identifier);
  const fields = /fields: "([^"]*)"/.exec(identifier);
  let text = key ? key[1] : identifier;
  if (labels && labels[1]) text += ` l=${labels[1]}`;
  if (fields && fields[1]) text += ` f=${fields[1]}`;
  return text;
}

function drawRing(ring) {
  const svg = $("ring");
  svg.replaceChildren();
  const ns = "http://www.w3.org/2000/svg";
  const slots = Math.min(ring.capacity, 120);
  const filled = Math.round((ring.versions.length / Math.max(ring.capacity, 1)) * slots);
  const r = 90;
  for (let i = 0; i < slots; i++) {
    const a0 = (i / slots) * 2 * Math.PI - Math.PI / 2;
    const a1 = ((i + 0.85) / slots) * 2 * Math.PI - Math.PI / 2;
    const path = document.createElementNS(ns, "path");
    const p0 = [r * Math.cos(a0), r * Math.sin(a0)];
    const p1 = [r * Math.cos(a1), r * Math.sin(a1)];
    path.setAttribute("d", `M${p0[0]},${p0[1]} A${r},${r} 0 0 1 ${p1[0]},${p1[1]}`);
    let cls = "slot";
    if (i < filled) cls += " filled";
    if (filled > 0 && i === filled - 1) cls += " newest";
    path.setAttribute("class", cls);
    svg.appendChild(path);
  }
  const text = document.createElementNS(ns, "text");
  text.setAttribute("y", "6");
  text.textContent = `${ring.versions.length} / ${ring.capacity}`;
  svg.appendChild(text);
  const small = document.createElementNS(ns, "text");
  small.setAttribute("y", "28");
  small.setAttribute("class", "small");
  small.textContent = t("held");
  svg.appendChild(small);
  const facts = $("ring-facts");
  facts.replaceChildren();
  const rows = [
    ["capacity", ring.capacity],
    ["oldest", ring.oldestRv],
    ["newest", ring.newestRv],
    ["window", secs(ring.windowSecs)],
    ["resizes", ring.resizes],
    ["bounds", `${ring.lowerBound}–${ring.upperBound}`],
  ];
  for (const [key, value] of rows) {
    facts.append(el("dt", {}, t(key)), el("dd", { "data-fact": key }, String(value)));
  }
}

function watcherCard(w, end) {
  const card = el("div", { class: "watcher", "data-watcher": String(w.id) });
  card.append(el("div", { class: "what" }, `#${w.id} ${shortIdentifier(w.identifier)}`));
  if (w.trigger) card.append(el("div", {}, `${t("trigger")}: ${w.trigger}`));
  const meter = el("div", { class: "meter" });
  const bar = el("div");
  const fill = w.bufferCapacity ? w.buffered / w.bufferCapacity : 0;
  bar.style.width = `${Math.round(fill * 100)}%`;
  if (fill >= 1) meter.classList.add("full");
  meter.append(bar);
  card.append(el("div", {}, `${t("buffer")} ${w.buffered}/${w.bufferCapacity}`), meter);
  if (end) {
    card.classList.add("ended");
    card.dataset.reason = end.reason;
    card.append(el("div", { class: "end" }, `${t("ended")}: ${t("reason_" + end.reason)}`));
    return card;
  }
  let facts = `${t("bookmarks")} ${w.bookmarks} · ${t("age")} ${secs(w.ageSecs)}`;
  if (w.endsInSecs !== null && w.endsInSecs !== undefined) {
    facts += ` · ${t("endsIn")} ${secs(w.endsInSecs)}`;
  }
  card.append(el("div", {}, facts));
  return card;
}

function drawView(view) {
  lastView = view;
  $("etcd-rev").textContent = view.etcdRevision ?? "–";
  const select = $("resource");
  const names = view.resources.map((r) => (r.group ? `${r.resource}.${r.group}` : r.resource));
  if (select.options.length !== names.length) {
    select.replaceChildren(...view.resources.map((r) => el("option", { value: r.resource }, r.group ? `${r.resource}.${r.group}` : r.resource)));
  }
  select.value = view.resource;
  const cacher = view.cacher;
  const list = $("watchers");
  list.replaceChildren();
  const now = Date.now();
  for (const [id, end] of ended) {
    if (now - end.at > ENDED_KEEP_MS) {
      ended.delete(id);
      identifiers.delete(id);
    }
  }
  if (!cacher) {
    $("cache-rv").textContent = "–";
    $("ring-facts").replaceChildren(el("dd", {}, t("noCache")));
    $("ring").replaceChildren();
    $("watcher-count").textContent = String(view.resources.find((r) => r.resource === view.resource)?.watches ?? 0);
    return;
  }
  $("cache-rv").textContent = cacher.resourceVersion;
  drawRing(cacher.ring);
  const budget = Math.max(0, Math.min(cacher.budgetMs, cacher.maxBudgetMs));
  $("budget-ms").textContent = budget.toFixed(0);
  $("budget-max").textContent = cacher.maxBudgetMs.toFixed(0);
  $("budget-bar").style.width = `${(budget / cacher.maxBudgetMs) * 100}%`;
  $("dispatched").textContent = cacher.eventsDispatched;
  $("closed-slow").textContent = cacher.watchersTerminatedSlow;
  $("watcher-count").textContent = String(cacher.watcherCount);
  for (const w of cacher.watchers) {
    identifiers.set(w.id, w);
    list.append(watcherCard(w));
  }
  const more = cacher.watcherCount - cacher.watchers.length;
  if (more > 0) list.append(el("div", { class: "watcher more" }, t("more", { n: more })));
  for (const end of [...ended.values()].slice(-ENDED_SHOWN)) {
    const w = identifiers.get(end.id) || { id: end.id, identifier: "", buffered: end.buffered, bufferCapacity: 0 };
    list.append(watcherCard({ ...w, buffered: end.buffered }, end));
  }
}

function flowRow(note) {
  let row = document.querySelector(`#flow li[data-rv="${note.rv}"]`);
  if (!row) {
    row = el("li", { "data-rv": String(note.rv), "data-key": note.key });
    row.append(
      el("span", {}, `RV ${note.rv}`),
      el("span", { class: `type-${note.eventType}` }, note.eventType),
      el("span", {}, note.key),
    );
    const stages = el("span", { class: "stages" });
    stages.append(
      el("span", { class: "done", "data-stage": "etcd" }, t("stageEtcd")),
      el("span", { "data-stage": "cache" }, t("stageCache")),
      el("span", { "data-stage": "dispatch" }, t("stageDispatch")),
    );
    row.append(stages);
    prependKept($("flow"), row, FLOW_ROWS);
  }
  return row;
}

function moment(note, text, cls, attrs = {}) {
  const item = el("li", { class: cls || "", "data-note": note.note, ...attrs });
  item.append(el("time", {}, clock(note.atMs)), document.createTextNode(text));
  prependKept($("moments"), item, MOMENTS);
}

function onNote(note) {
  switch (note.note) {
    case "entered":
      flowRow(note).querySelector('[data-stage="cache"]').classList.add("done");
      break;
    case "dispatched": {
      const row = flowRow(note);
      row.querySelector('[data-stage="cache"]').classList.add("done");
      row.querySelector('[data-stage="dispatch"]').classList.add("done");
      break;
    }
    case "bookmark":
      moment(note, t("bookmark", { rv: note.rv, n: note.watchers.length }), "bookmark");
      break;
    case "watcherAdded":
      identifiers.set(note.id, { id: note.id, identifier: note.identifier, buffered: 0, bufferCapacity: 0 });
      moment(note, t("added", { id: note.id }) + " " + shortIdentifier(note.identifier), "added");
      break;
    case "watcherEnded":
      ended.set(note.id, { id: note.id, reason: note.reason, buffered: note.buffered, at: note.atMs });
      moment(note, t("endedNote", { id: note.id, reason: t("reason_" + note.reason) }), note.reason === "slow" ? "slow" : "ended", { "data-reason": note.reason });
      if (lastView) drawView(lastView);
      break;
    case "expired":
      moment(note, t("expired", { rv: note.requested }), "expired");
      break;
    case "relisted":
      moment(note, t("relisted", { rv: note.rv }), "relist");
      break;
    case "resized":
      moment(note, t("resized", note), "resized");
      break;
    case "request":
      moment(note, `${note.verb.toUpperCase()} ${note.path} → ${note.code} ${note.client}`, "request", { "data-verb": note.verb, "data-code": String(note.code) });
      break;
    default:
      break;
  }
}

const streamUrl = () => `/debug/ui/events?resource=${encodeURIComponent(resource)}`;
const page = livePage({
  text: SERVER_TEXT,
  url: streamUrl(),
  onView: drawView,
  onNote,
  redraw: () => lastView && drawView(lastView),
});
$("resource").addEventListener("change", (e) => {
  resource = e.target.value;
  $("flow").replaceChildren();
  ended.clear();
  page.connect(streamUrl());
});
