// Loaded models: Load, Unload and "Load anyway" wherever a model is shown, the "Loaded models" panel, and the
// playgrounds' model selector (choosing a model loads it). Uses call(), showMessage() and showNotice() from app.js.
// Every value is written with textContent.
"use strict";

function runtimePath(name, action) {
  return "/api/ui/models/" + encodeURIComponent(name) + "/" + action;
}

// Loads `name` (past the memory estimate when `anyway`); the panel follows. Throws what the server said.
async function loadModel(name, anyway) {
  const screen = await call("POST", runtimePath(name, "load"), anyway ? { ignoringMemory: true } : {});
  renderLoaded(screen);
  return screen;
}

function renderLoaded(screen) {
  const table = document.getElementById("loaded-table");
  if (!table) return;
  const empty = document.getElementById("loaded-empty");
  empty.textContent = screen.emptyMessage || "";
  empty.hidden = !screen.emptyMessage;
  table.hidden = screen.rows.length === 0;
  const rows = screen.rows.map((row) => {
    const tr = document.createElement("tr");
    tr.dataset.loaded = row.name;
    tr.dataset.state = row.state;
    const cells = [row.name, row.runtimeText, row.state, row.memoryText, row.whereText].map((text) => {
      const td = document.createElement("td");
      td.textContent = text || "";
      return td;
    });
    if (row.message) {
      const reason = document.createElement("div");
      reason.className = "reason";
      reason.textContent = row.message;
      cells[2].append(reason);
    }
    const actions = document.createElement("td");
    if (row.usePath) {
      const use = document.createElement("a");
      use.className = "button";
      use.href = row.usePath;
      use.textContent = "Use";
      actions.append(use, " ");
    }
    const unload = document.createElement("button");
    unload.type = "button";
    unload.className = "secondary";
    unload.dataset.runtime = "unload";
    unload.dataset.name = row.name;
    unload.textContent = "Unload";
    actions.append(unload);
    tr.append(...cells, actions);
    return tr;
  });
  table.querySelector("tbody").replaceChildren(...rows);
}

async function refreshLoaded() {
  try {
    renderLoaded(await (await fetch("/api/ui/runtimes", { credentials: "same-origin" })).json());
  } catch (ignored) { /* the next refresh tries again */ }
}

// The Load, Unload and Load anyway buttons of the Models page, a model's page and the panel.
async function runtimeAction(button) {
  const name = button.dataset.name;
  const action = button.dataset.runtime;
  const status = document.getElementById("runtime-status");
  const anyway = document.getElementById("load-anyway");
  button.disabled = true;
  if (status) { status.dataset.state = "loading"; status.textContent = action === "unload" ? "" : "Loading " + name + "…"; }
  try {
    if (action === "unload") {
      renderLoaded(await call("POST", runtimePath(name, "unload")));
      showNotice(name + " is unloaded: its runtime stopped.");
      if (status) { status.dataset.state = ""; status.textContent = ""; }
    } else {
      const screen = await loadModel(name, action === "load-anyway");
      const row = screen.rows.find((candidate) => candidate.name === name);
      showNotice(name + " is loaded" + (row && row.whereText ? " (" + row.whereText + ")." : "."));
      if (status) { status.dataset.state = "loaded"; status.textContent = "loaded"; }
      if (anyway) anyway.hidden = true;
    }
    const unload = document.querySelector('.runtime button[data-runtime="unload"]');
    if (unload) unload.hidden = action === "unload";
    showMessage("");
  } catch (error) {
    if (status) { status.dataset.state = "failed"; status.textContent = ""; }
    if (error.code === "insufficientMemory" && anyway && button.closest(".runtime")) anyway.hidden = false;
    showMessage(error.message);
    refreshLoaded();
  } finally {
    button.disabled = false;
  }
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-runtime]");
  if (button) runtimeAction(button);
});

// A playground's selector: choosing a model that is not loaded loads it; a model that does not fit offers "Load
// anyway". The page loads its selection by itself only when this browser's own Use button chose it (a note in
// sessionStorage): a link from elsewhere to /chat?model=… must not start a runtime. Requests name the selected
// model, and one not loaded yet loads when used.
function modelChoice() {
  const select = document.getElementById("model");
  if (!select) return;
  const status = document.getElementById("model-status");
  const anyway = document.getElementById("load-anyway");
  const source = document.getElementById("source-name");
  // The buttons a load holds disabled, given back when it ends or another choice is made (a request in flight
  // keeps its own buttons disabled; those are left alone).
  let held = [];
  function hold() {
    held = [...document.querySelectorAll("main form button[type=submit]")].filter((button) => !button.disabled);
    held.forEach((button) => { button.disabled = true; });
  }
  function release() {
    held.forEach((button) => { button.disabled = false; });
    held = [];
  }
  function say(state, text) {
    status.dataset.state = state;
    status.textContent = text;
  }
  let latest = 0; // the newest choice: an older one finishing late must not speak for it
  async function prepare(force) {
    const option = select.selectedOptions[0];
    if (!option) return;
    const mine = ++latest;
    release();
    anyway.hidden = true;
    source.textContent = option.value === "@endpoint" ? option.textContent : option.value;
    const url = new URL(window.location.href);
    url.searchParams.set("model", option.value);
    history.replaceState(null, "", url);
    if (option.dataset.state === "endpoint") { say("idle", ""); return; }
    if (option.dataset.state === "loaded" && force !== "anyway") { say("ready", option.value + " is loaded."); return; }
    if (force === "wait") {
      say("idle", option.value + " loads when you use it. " + (option.dataset.detail || ""));
      return;
    }
    say("loading", "Loading " + option.value + "… " + (option.dataset.detail || ""));
    hold();
    try {
      await loadModel(option.value, force === "anyway");
      option.dataset.state = "loaded";
      option.textContent = option.value + " (loaded)";
      if (mine === latest) { say("ready", option.value + " is loaded."); showMessage(""); }
    } catch (error) {
      if (mine === latest) {
        say("failed", error.message);
        if (error.code === "insufficientMemory") anyway.hidden = false;
      }
    } finally {
      if (mine === latest) release();
    }
  }
  select.addEventListener("change", () => prepare(false));
  anyway.addEventListener("click", () => prepare("anyway"));
  let chosen = null;
  try { chosen = JSON.parse(sessionStorage.getItem("modeldepot-use") || "null"); } catch (ignored) { /* none */ }
  sessionStorage.removeItem("modeldepot-use");
  const fresh = chosen && chosen.model === select.value && chosen.path === window.location.pathname
    && Date.now() - chosen.at < 10000;
  prepare(fresh ? false : "wait");
}

// Use (a row's button, the panel's link) notes which model it chose for which page, and when, so that the page it
// opens in this tab loads it at once; a note older than 10 s, for another page or another model is ignored. A
// click with a modifier (a new tab or window) leaves none.
document.addEventListener("click", (event) => {
  if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
  const use = event.target.closest('button[data-action="use"], a.button[href*="?model="]');
  if (!use) return;
  const target = new URL(use.dataset.use || use.getAttribute("href") || "", window.location.href);
  const model = target.searchParams.get("model");
  if (model) sessionStorage.setItem("modeldepot-use", JSON.stringify({ model, path: target.pathname, at: Date.now() }));
}, true);

document.addEventListener("DOMContentLoaded", () => {
  modelChoice();
  if (document.getElementById("loaded-table")) setInterval(refreshLoaded, 3000);
});
