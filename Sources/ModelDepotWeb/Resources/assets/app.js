// ModelDepot's web app: buttons call the JSON API, and live state arrives as server-sent events. Every value
// is written with textContent; nothing from the server becomes HTML.
"use strict";

function showMessage(text) {
  const box = document.getElementById("message");
  if (!box) return;
  box.textContent = text || "";
  box.hidden = !text;
}

async function call(method, path, body) {
  const answer = await fetch(path, {
    method, credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}),
  });
  if (!answer.ok) {
    let text = answer.status + " " + answer.statusText;
    let code = "";
    try {
      const refusal = await answer.json();
      text = refusal.error || text;
      code = refusal.code || "";
    } catch (ignored) { /* not JSON */ }
    const error = new Error(text);
    error.code = code; // a ModelDepotError code: "insufficientMemory" offers Load anyway
    throw error;
  }
  return answer.json();
}

async function act(button) {
  const name = button.dataset.name;
  const action = button.dataset.action;
  if (action === "use") {
    // The playground with the model selected (it loads there); a model no runtime here serves opens its page,
    // which says why.
    window.location.href = button.dataset.use || "/models/" + encodeURIComponent(name);
    return;
  }
  button.disabled = true;
  try {
    await call("POST", "/api/ui/models/" + encodeURIComponent(name) + "/" + action);
    showMessage("");
  } catch (error) {
    showMessage(error.message);
  } finally {
    button.disabled = false;
  }
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-action]");
  if (button) act(button);
});

function setStatus(row, model) {
  const badge = row.querySelector("[data-badge]");
  if (badge) {
    badge.textContent = model.status.badge.label;
    badge.className = "badge badge-" + model.status.badge.kind;
  }
  const reason = row.querySelector("[data-reason]");
  if (reason) reason.textContent = model.status.badge.reason || "";
  const bar = row.querySelector("[data-progress]");
  if (bar) {
    const fraction = model.status.fraction;
    bar.hidden = fraction === undefined || fraction === null;
    if (!bar.hidden && fraction >= Number(bar.value)) bar.value = fraction;
  }
  const button = row.querySelector("button[data-action]");
  if (button && model.status.action) {
    button.dataset.action = model.status.action;
    button.textContent = model.status.actionLabel;
  }
  // Load is offered once the model is here.
  const load = row.querySelector('button[data-runtime="load"]');
  if (load) load.hidden = !model.status.selectable;
}

function renderDownloads(screen) {
  const list = document.getElementById("downloads");
  if (!list) return;
  const empty = document.getElementById("empty");
  if (empty) empty.hidden = screen.rows.length > 0;
  const overall = document.getElementById("overall");
  if (overall) {
    overall.hidden = screen.overallFraction === undefined;
    if (!overall.hidden) overall.value = screen.overallFraction;
  }
  const overallText = document.getElementById("overall-text");
  if (overallText) overallText.textContent = screen.overallText || "";
  const bandwidth = document.getElementById("bandwidth-text");
  if (bandwidth) bandwidth.textContent = "Now: " + screen.bandwidthText;
  drawTimeChart(document.getElementById("throughput"), screen.throughput);
  const seen = new Set();
  for (const row of screen.rows) {
    seen.add(row.name);
    let item = list.querySelector('li[data-download="' + CSS.escape(row.name) + '"]');
    if (!item) {
      item = document.createElement("li");
      item.dataset.download = row.name;
      for (const part of ["line", "bar", "numbers", "current", "waiting", "failure", "actions"]) {
        const element = document.createElement(part === "bar" ? "progress" : "div");
        element.className = part;
        if (part === "bar") { element.max = 1; element.value = 0; element.setAttribute("aria-label", row.name); }
        item.appendChild(element);
      }
      list.prepend(item);
    }
    item.dataset.state = row.state;
    const line = item.querySelector(".line");
    line.replaceChildren();
    const link = document.createElement("a");
    link.href = "/models/" + encodeURIComponent(row.name);
    link.textContent = row.name;
    const state = document.createElement("span");
    state.className = "state";
    state.textContent = " " + row.stateText;
    line.append(link, state);
    const bar = item.querySelector("progress");
    if (row.fraction !== undefined && row.fraction >= Number(bar.value)) bar.value = row.fraction;
    item.querySelector(".numbers").textContent =
      [row.bytesText, row.speedText, row.etaText, row.filesText, row.connectionsText].filter(Boolean).join("  ·  ");
    item.querySelector(".current").textContent = row.currentFile || "";
    item.querySelector(".waiting").textContent = row.waiting || "";
    item.querySelector(".failure").textContent = row.message || "";
    drawRowChart(item, row.throughput);
    const actions = item.querySelector(".actions");
    // Buttons are rebuilt only when they change: one under the pointer must not be replaced four times a second.
    const wanted = row.actions.map((action) => action.action).join(",");
    if (actions.dataset.actions === wanted) continue;
    actions.dataset.actions = wanted;
    actions.replaceChildren(...row.actions.map((action) => {
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.action = action.action;
      button.dataset.name = row.name;
      button.textContent = action.label;
      return button;
    }));
  }
  for (const item of list.querySelectorAll("li[data-download]")) {
    if (!seen.has(item.dataset.download)) item.remove();
  }
}

// A download's own speed chart, last in its card (so nothing above it moves when it appears); hidden for one
// that moved nothing in the window. The card's numbers already say the speed to screen readers.
function drawRowChart(item, chart) {
  let figure = item.querySelector("figure.chart-row");
  if (!figure) {
    figure = document.createElement("figure");
    figure.className = "chart chart-time chart-row";
    figure.setAttribute("aria-hidden", "true");
    item.appendChild(figure);
  }
  figure.hidden = !chart;
  if (chart) drawTimeChart(figure, chart);
}

async function refreshOnboarding(name) {
  const screen = await (await fetch("/api/ui/onboarding/" + encodeURIComponent(name))).json();
  const section = document.querySelector(".onboarding");
  if (!section) return;
  section.dataset.step = screen.step;
  document.getElementById("onboarding-message").textContent = screen.message;
  const bar = document.getElementById("onboarding-progress");
  bar.hidden = screen.fraction === undefined;
  if (!bar.hidden && screen.fraction >= Number(bar.value)) bar.value = screen.fraction;
  const actions = section.querySelector(".actions");
  actions.replaceChildren();
  if (screen.action) {
    const button = document.createElement("button");
    button.type = "button";
    button.id = "onboarding-action";
    button.dataset.action = screen.action;
    button.dataset.name = screen.name;
    button.textContent = screen.actionLabel;
    actions.appendChild(button);
  }
}

function listen() {
  const page = document.body.dataset.page;
  if (!["models", "model", "downloads", "onboarding"].includes(page)) return;
  const events = new EventSource("/api/ui/events");
  events.addEventListener("update", (event) => {
    const update = JSON.parse(event.data);
    for (const model of update.models) {
      for (const row of document.querySelectorAll('[data-row="' + CSS.escape(model.name) + '"]')) setStatus(row, model);
    }
    renderDownloads(update.downloads);
    if (page === "onboarding") refreshOnboarding(document.body.dataset.model).catch((e) => showMessage(e.message));
  });
}

function showNotice(text) {
  const box = document.getElementById("notice");
  if (!box) return;
  box.textContent = text || "";
  box.hidden = !text;
}

// A change that alters the page reloads it; its sentence survives the reload in sessionStorage.
function reloadSaying(text) {
  sessionStorage.setItem("modeldepot-notice", text);
  window.location.reload();
}

function confirmDelete(text) {
  const dialog = document.getElementById("confirm");
  if (!dialog || typeof dialog.showModal !== "function") return Promise.resolve(window.confirm(text));
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

async function storageAction(button) {
  const action = button.dataset.storage;
  const body = { id: button.dataset.id, type: button.dataset.type };
  if (action === "delete" && !(await confirmDelete(button.dataset.confirm))) return;
  button.disabled = true;
  try {
    const outcome = await call("POST", "/api/ui/storage/" + action, body);
    showMessage("");
    if (action === "verify") {
      showNotice(outcome.message);
      const actions = button.closest(".actions");
      if (outcome.next && !actions.querySelector('[data-storage="' + outcome.next.action + '"]')) {
        const next = document.createElement("button");
        next.type = "button";
        next.dataset.storage = outcome.next.action;
        next.dataset.id = body.id;
        next.dataset.type = body.type;
        next.textContent = outcome.next.label;
        next.setAttribute("aria-label", outcome.next.label + " " + body.id);
        actions.appendChild(next);
        next.focus();
      }
    } else {
      reloadSaying(outcome.message);
    }
  } catch (error) {
    showMessage(error.message);
  } finally {
    button.disabled = false;
  }
}

function storagePage() {
  if (document.body.dataset.page !== "storage") return;
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-storage]");
    if (button) storageAction(button);
  });
  const form = document.getElementById("prune-form");
  let budget = null;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    budget = Math.round(Number(form.elements.gigabytes.value) * 1e9);
    try {
      const preview = await call("POST", "/api/ui/storage/prune-preview", { maxBytes: budget });
      document.getElementById("prune-summary").textContent = preview.summary;
      drawStorageChart(document.getElementById("storage-chart"), preview.chart);
      document.getElementById("prune-apply").hidden = preview.removes.length === 0;
      document.getElementById("prune-preview").hidden = false;
      showMessage("");
    } catch (error) {
      showMessage(error.message);
    }
  });
  document.getElementById("prune-apply").addEventListener("click", async () => {
    try {
      reloadSaying((await call("POST", "/api/ui/storage/prune", { maxBytes: budget })).message);
    } catch (error) {
      showMessage(error.message);
    }
  });
  const detached = document.getElementById("prune-detached");
  if (detached) detached.addEventListener("click", async () => {
    try {
      reloadSaying((await call("POST", "/api/ui/storage/prune-detached", {})).message);
    } catch (error) {
      showMessage(error.message);
    }
  });
}

function bandwidthForm() {
  const form = document.getElementById("bandwidth");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = form.elements.megabytes.value.trim();
    const bytes = text === "" ? null : Math.round(Number(text) * 1e6);
    try {
      const screen = await call("PUT", "/api/ui/bandwidth", { bytesPerSecond: bytes });
      const now = document.getElementById("bandwidth-text");
      if (now) now.textContent = "Now: " + screen.bandwidthText;
      showMessage("");
    } catch (error) {
      showMessage(error.message);
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const saved = sessionStorage.getItem("modeldepot-notice");
  if (saved) { sessionStorage.removeItem("modeldepot-notice"); showNotice(saved); }
  listen();
  bandwidthForm();
  storagePage();
});
