// The part every live page shares: helpers, the words in two languages, the
// light/dark switch, and one server-sent event stream. A page calls
// livePage({ text, url, onView, onNote, redraw }) once.
"use strict";

const COMMON_TEXT = {
  en: { connecting: "connecting", open: "live", closed: "reconnecting" },
  zh: { connecting: "连接中", open: "实时", closed: "重新连接中" },
};
const params = new URLSearchParams(location.search);
let lang = params.get("lang") || (navigator.language.startsWith("zh") ? "zh" : "en");
let TEXT = COMMON_TEXT;

const $ = (id) => document.getElementById(id);
const t = (key, vars = {}) =>
  String((TEXT[lang] && TEXT[lang][key]) ?? TEXT.en[key] ?? key)
    .replace(/\{(\w+)\}/g, (_, v) => vars[v]);
const el = (tag, attrs = {}, text) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
};
const clock = (ms) => new Date(ms).toLocaleTimeString([], { hour12: false });
const secs = (s) =>
  s >= 60 ? `${Math.floor(s / 60)}m${Math.round(s % 60)}s` : `${s.toFixed(1)}s`;

// Adds a line to a newest-first list, keeping at most `keep`.
function prependKept(list, item, keep) {
  list.prepend(item);
  while (list.children.length > keep) list.lastElementChild.remove();
}

function livePage({ text, url, onView, onNote, redraw }) {
  TEXT = { en: { ...COMMON_TEXT.en, ...text.en }, zh: { ...COMMON_TEXT.zh, ...text.zh } };
  let source = null;
  const conn = $("conn");
  const setConn = (state) => {
    conn.dataset.state = state;
    conn.textContent = t(state);
  };
  const translate = () => {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    for (const node of document.querySelectorAll("[data-i18n]")) {
      node.textContent = t(node.dataset.i18n);
    }
    $("lang").textContent = lang === "zh" ? "English" : "中文";
    setConn(conn.dataset.state);
    if (redraw) redraw();
  };
  const connect = (streamUrl) => {
    if (source) source.close();
    setConn("connecting");
    source = new EventSource(streamUrl);
    source.onopen = () => setConn("open");
    source.onerror = () => setConn("closed");
    source.addEventListener("view", (e) => onView(JSON.parse(e.data)));
    if (onNote) source.addEventListener("note", (e) => onNote(JSON.parse(e.data)));
  };
  $("lang").addEventListener("click", () => {
    lang = lang === "zh" ? "en" : "zh";
    translate();
  });
  $("theme").addEventListener("click", () => {
    const root = document.documentElement;
    const dark = root.dataset.theme
      ? root.dataset.theme === "dark"
      : matchMedia("(prefers-color-scheme: dark)").matches;
    root.dataset.theme = dark ? "light" : "dark";
  });
  translate();
  connect(url);
  return { connect };
}
