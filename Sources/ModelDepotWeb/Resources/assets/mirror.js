// The mirror's dashboard: follows /ui/api/events (server-sent events: the state whenever it changes) while the
// page is visible (a hidden tab holds no stream), and writes every value with textContent. Changes go to
// /ui/api/repositories/… as JSON, and the state is read once after each.
"use strict";

function say(id, text) {
  const box = document.getElementById(id);
  if (!box) return;
  box.textContent = text || "";
  box.hidden = !text;
}

async function call(method, path, body) {
  const answer = await fetch(path, {
    method, credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}),
  });
  let json = {};
  try { json = await answer.json(); } catch (ignored) { /* not JSON */ }
  if (!answer.ok) throw new Error(json.error || answer.status + " " + answer.statusText);
  return json;
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function render(screen) {
  const readOnly = document.getElementById("read-only");
  if (readOnly) { readOnly.textContent = screen.readOnlyText || ""; readOnly.hidden = !screen.readOnly; }
  for (const counter of screen.counters) {
    const value = document.querySelector('[data-counter="' + counter.key + '"] .value');
    if (value) value.textContent = counter.value;
  }
  for (const chart of screen.charts || []) {
    drawTimeChart(document.querySelector('figure[data-chart-key="' + chart.key + '"]'), chart.chart);
  }
  document.getElementById("pulls-text").textContent = screen.pullsText;
  document.getElementById("pulls").replaceChildren(...screen.pulls.map((pull) => {
    const item = element("li");
    item.dataset.pull = pull.repository + "/" + pull.path;
    const line = element("div", undefined, "line");
    line.append(element("code", pull.repository), " " + pull.path);
    const bar = element("progress");
    bar.max = 1;
    bar.value = pull.fraction;
    bar.setAttribute("aria-label", pull.repository + " " + pull.path);
    item.append(line, bar, element("div", pull.bytesText, "numbers"));
    return item;
  }));
  document.getElementById("total").textContent = screen.totalText;
  // An empty cache shows its total ("0 repositories, 0 B"), not a table of headers over nothing.
  document.getElementById("repositories").hidden = screen.rows.length === 0;
  const rows = document.querySelector("#repositories tbody");
  // Rows are rebuilt only when they change: a button under the pointer must not be replaced every update.
  const wanted = JSON.stringify(screen.rows);
  if (rows.dataset.rows !== wanted) {
    rows.dataset.rows = wanted;
    rows.replaceChildren(...screen.rows.map((row) => {
      const tr = element("tr");
      tr.dataset.repo = row.id;
      tr.dataset.type = row.type;
      const name = element("th");
      name.scope = "row";
      name.append(element("code", row.id));
      if (row.pinned) name.append(" ", element("span", "Pinned", "tag"));
      name.append(element("div", row.type + ", " + row.filesText, "description"));
      const actions = element("div", undefined, "actions");
      for (const action of row.actions) {
        const button = element("button", action.label);
        button.type = "button";
        button.dataset.mirror = action.action;
        button.dataset.id = row.id;
        button.dataset.type = row.type;
        button.dataset.confirm = action.confirmation || "";
        button.setAttribute("aria-label", action.label + " " + row.id);
        actions.append(button);
      }
      const cell = element("td");
      cell.append(actions);
      tr.append(name, element("td", row.sizeText), element("td", row.lastUsedText), cell);
      return tr;
    }));
  }
  document.querySelector("#clients tbody").replaceChildren(...screen.clients.map((client) => {
    const tr = element("tr");
    const address = element("td");
    address.append(element("code", client.address));
    tr.append(address, element("td", client.requestsText), element("td", client.lastSeenText));
    return tr;
  }));
}

let events = null;
let lostTheMirror = false;

// One stream while the page is visible; closed when it is hidden, opened again when it shows.
function follow() {
  if (!document.getElementById("counters")) return;
  if (document.hidden) {
    if (events) events.close();
    events = null;
    return;
  }
  if (events) return;
  events = new EventSource("/ui/api/events", { withCredentials: true });
  events.addEventListener("update", (event) => {
    if (lostTheMirror) say("message", "");
    lostTheMirror = false;
    render(JSON.parse(event.data));
  });
  events.addEventListener("shutdown", () => {
    events.close();
    events = null;
    lostTheMirror = true;
    say("message", "The mirror is stopping; reload the page once it is back.");
  });
  // The browser reconnects by itself after a network error; say so meanwhile. An answer that is not a stream (a
  // restarted mirror refuses the old sign-in with 401) closes it for good: show the page afresh (its sign-in).
  events.onerror = () => {
    lostTheMirror = true;
    if (events && events.readyState === EventSource.CLOSED) {
      events = null;
      window.location.reload();
      return;
    }
    say("message", "Cannot reach the mirror; trying again…");
  };
}

async function refresh() {
  if (document.hidden || !document.getElementById("counters")) return;
  try {
    render(await (await fetch("/ui/api/state", { credentials: "same-origin" })).json());
  } catch (error) {
    say("message", "Cannot reach the mirror: " + error.message);
  }
}

function confirmEvict(text) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  return new Promise((resolve) => {
    const yes = document.getElementById("confirm-yes");
    const no = document.getElementById("confirm-no");
    const finish = (answer) => {
      yes.removeEventListener("click", onYes);
      no.removeEventListener("click", onNo);
      dialog.removeEventListener("cancel", onNo);
      dialog.close();
      resolve(answer);
    };
    const onYes = () => finish(true);
    const onNo = () => finish(false);
    yes.addEventListener("click", onYes);
    no.addEventListener("click", onNo);
    dialog.addEventListener("cancel", onNo);
    dialog.showModal();
    no.focus();
  });
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-mirror]");
  if (!button) return;
  const action = button.dataset.mirror;
  if (button.dataset.confirm && !(await confirmEvict(button.dataset.confirm))) return;
  button.disabled = true;
  try {
    const outcome = await call("POST", "/ui/api/repositories/" + action, { id: button.dataset.id, type: button.dataset.type });
    say("message", "");
    say("notice", outcome.message);
    await refresh();
  } catch (error) {
    say("message", error.message);
  } finally {
    button.disabled = false;
  }
});

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("sign-in");
  if (form) form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await call("POST", "/ui/api/session", { token: form.elements.token.value });
      window.location.reload();
    } catch (error) {
      say("message", error.message);
    }
  });
  follow();
  document.addEventListener("visibilitychange", follow);
});
