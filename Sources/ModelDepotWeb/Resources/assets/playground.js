// The Chat and Embeddings playgrounds. The conversation lives in this page; each request carries it. A reply
// arrives as server-sent events over a POST (fetch and a stream reader); Stop aborts the request, which ends the
// generation on the server. Every value is written with textContent.
"use strict";

// The model the page's selector names (runtimes.js loads it when chosen).
function selectedModel() {
  const select = document.getElementById("model");
  return select ? select.value : undefined;
}

function chatPage() {
  const form = document.getElementById("chat-form");
  if (!form) return;
  const conversation = document.getElementById("conversation");
  const status = document.getElementById("reply-status");
  const send = document.getElementById("send");
  const stop = document.getElementById("stop");
  let messages = [];
  let running = null;

  function bubble(role, text) {
    const item = document.createElement("li");
    item.className = "turn turn-" + role;
    item.dataset.role = role;
    const who = document.createElement("strong");
    who.textContent = role === "user" ? "You" : "Model";
    const body = document.createElement("div");
    body.className = "text";
    body.textContent = text;
    item.append(who, body);
    conversation.append(item);
    return body;
  }

  function setStatus(state, text) {
    status.dataset.state = state;
    status.textContent = text;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (running) return;
    const text = form.elements.message.value.trim();
    if (!text) return;
    messages.push({ role: "user", content: text });
    bubble("user", text);
    form.elements.message.value = "";
    const reply = bubble("assistant", "");
    reply.parentElement.dataset.state = "streaming";
    window.scrollTo(0, document.documentElement.scrollHeight);
    running = new AbortController();
    send.disabled = true;
    stop.disabled = false;
    setStatus("streaming", "Writing…");
    let finished = false;
    try {
      const answer = await fetch("/api/ui/chat", {
        method: "POST", credentials: "same-origin", signal: running.signal,
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          messages, system: form.elements.system.value, preset: form.elements.preset.value,
          maxTokens: Number(form.elements.maxTokens.value) || undefined, model: selectedModel(),
        }),
      });
      if (!answer.ok) {
        let message = answer.status + " " + answer.statusText;
        try { message = (await answer.json()).error || message; } catch (ignored) { /* not JSON */ }
        throw new Error(message);
      }
      const reader = answer.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const name = (frame.match(/^event: (.*)$/m) || [])[1];
          const data = JSON.parse((frame.match(/^data: (.*)$/m) || [])[1] || "{}");
          if (name === "chunk") {
            // Follow the reply while the reader is at the end of the page; leave them be if they scrolled up.
            const root = document.documentElement;
            const following = window.innerHeight + window.scrollY >= root.scrollHeight - 48;
            reply.textContent += data.text;
            if (following) window.scrollTo(0, root.scrollHeight);
          }
          if (name === "done") {
            finished = true;
            reply.parentElement.dataset.state = "done";
            reply.parentElement.dataset.finish = data.finishReason || "";
            setStatus("done", data.finishText + " " + data.usageText);
          }
          if (name === "error") throw new Error(data.error);
        }
      }
      if (!finished) throw new Error("The reply ended early.");
    } catch (error) {
      if (error.name === "AbortError") {
        reply.parentElement.dataset.state = "stopped";
        setStatus("stopped", "Stopped. The reply so far stays in the conversation.");
      } else {
        reply.parentElement.dataset.state = "failed";
        setStatus("failed", error.message);
      }
    } finally {
      messages.push({ role: "assistant", content: reply.textContent });
      running = null;
      send.disabled = false;
      stop.disabled = true;
    }
  });
  stop.addEventListener("click", () => { if (running) running.abort(); });
  document.getElementById("clear").addEventListener("click", () => {
    if (running) running.abort();
    messages = [];
    conversation.replaceChildren();
    setStatus("idle", "");
  });
}

function embeddingsPage() {
  const form = document.getElementById("embeddings-form");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const sentences = form.elements.sentences.value.split("\n").map((line) => line.trim()).filter(Boolean);
    const button = document.getElementById("compare");
    button.disabled = true;
    try {
      const answer = await fetch("/api/ui/embeddings", {
        method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ sentences, model: selectedModel() }),
      });
      const result = await answer.json();
      if (!answer.ok) throw new Error(result.error || answer.statusText);
      const table = document.getElementById("matrix");
      const head = document.createElement("thead");
      const headRow = document.createElement("tr");
      const corner = document.createElement("td");
      headRow.append(corner);
      result.sentences.forEach((sentence, index) => {
        const th = document.createElement("th");
        th.scope = "col";
        th.textContent = String(index + 1);
        th.title = sentence;
        headRow.append(th);
      });
      head.append(headRow);
      const body = document.createElement("tbody");
      result.sentences.forEach((sentence, i) => {
        const tr = document.createElement("tr");
        const th = document.createElement("th");
        th.scope = "row";
        th.textContent = (i + 1) + ". " + sentence;
        tr.append(th);
        result.similarityTexts[i].forEach((text) => {
          const td = document.createElement("td");
          td.textContent = text;
          tr.append(td);
        });
        body.append(tr);
      });
      table.replaceChildren(head, body);
      document.getElementById("closest").textContent = result.closestText;
      document.getElementById("dimensions").textContent = result.dimensions + " dimensions, cosine similarity from -1 to 1.";
      document.getElementById("similarity").hidden = false;
      showMessage("");
    } catch (error) {
      showMessage(error.message);
    } finally {
      button.disabled = false;
    }
  });
}

document.addEventListener("DOMContentLoaded", () => { chatPage(); embeddingsPage(); transcribePage(); });

// The Transcribe screen: the chosen file is read in the page and sent as base64 inside JSON (changes are
// JSON-only, which keeps other sites' forms out); the answer's segments fill a table and its subtitles become
// downloadable files.
function transcribePage() {
  const form = document.getElementById("transcribe-form");
  if (!form) return;
  const status = document.getElementById("transcribe-status");
  const links = { srt: document.getElementById("download-srt"), vtt: document.getElementById("download-vtt") };
  function setStatus(state, text) {
    status.dataset.state = state;
    status.textContent = text;
  }
  function base64(buffer) {
    const bytes = new Uint8Array(buffer);
    let binary = "";
    for (let start = 0; start < bytes.length; start += 0x8000) {
      binary += String.fromCharCode.apply(null, bytes.subarray(start, start + 0x8000));
    }
    return btoa(binary);
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = form.elements.audio.files[0];
    if (!file) return;
    const button = document.getElementById("transcribe");
    button.disabled = true;
    setStatus("working", "Transcribing " + file.name + "…");
    try {
      const answer = await fetch("/api/ui/transcribe", {
        method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          name: file.name, audio: base64(await file.arrayBuffer()), language: form.elements.language.value,
          translate: form.elements.translate.checked, wordTimestamps: form.elements.wordTimestamps.checked,
          model: selectedModel(),
        }),
      });
      const result = await answer.json();
      if (!answer.ok) throw new Error(result.error || answer.statusText);
      document.getElementById("summary").textContent = result.summaryText;
      document.getElementById("transcript-text").textContent = result.text;
      const notes = document.getElementById("notes");
      notes.replaceChildren(...result.notes.map((note) => {
        const item = document.createElement("li");
        item.textContent = note;
        return item;
      }));
      const rows = result.rows.map((row) => {
        const tr = document.createElement("tr");
        const time = document.createElement("td");
        time.textContent = row.timeText;
        const text = document.createElement("td");
        text.textContent = row.text;
        tr.append(time, text);
        return tr;
      });
      document.querySelector("#segments tbody").replaceChildren(...rows);
      document.getElementById("srt-text").textContent = result.srt;
      const stem = file.name.replace(/\.[^.]*$/, "") || "transcript";
      for (const [format, link] of Object.entries(links)) {
        if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href);
        link.href = URL.createObjectURL(new Blob([result[format]], { type: format === "srt" ? "application/x-subrip" : "text/vtt" }));
        link.download = stem + "." + format;
      }
      document.getElementById("transcript").hidden = false;
      setStatus("done", "Done.");
      showMessage("");
    } catch (error) {
      setStatus("failed", "");
      showMessage(error.message);
    } finally {
      button.disabled = false;
    }
  });
}
