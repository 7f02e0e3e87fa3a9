"""Drives `modeldepot ui --demo` from download to use in a real headless Chromium, against the real runtimes.

Usage: python use_driver.py LAUNCH_URL SCREENSHOTS_DIR SPEECH_FILE
Use on the demo's sentence encoder opens Embeddings with it selected and loaded; demo-llama is downloaded, Use
opens Chat, which loads it into llama.cpp's server and answers; the Loaded models panel shows both with the
server's port; loading it twice keeps one runtime; a runtime killed under the app shows as stopped and choosing
the model again brings it back; Unload closes its port; demo-whisper is downloaded and transcribes speech through
faster-whisper-server; demo-huge is refused with its memory estimate and "Load anyway" is offered. axe-core runs
in every state and on every page light and dark, wide and phone-sized. Prints one JSON object like ui_driver.py's.
"""
import os, signal, socket, sys, time

from selenium.webdriver.common.by import By

from browser_session import BrowserSession

launch, shots, speech = sys.argv[1], sys.argv[2], sys.argv[3]
base = launch.split("/session")[0]
session = BrowserSession(shots, patience=120)
driver, wait, results, shot, flow = session.driver, session.wait, session.results, session.shot, session.flow


def row_button(name, selector):
    return driver.find_element(By.CSS_SELECTOR, f'tr[data-row="{name}"] {selector}')


def model_status():
    element = driver.find_element(By.ID, "model-status")
    return element.get_attribute("data-state"), element.text


def loaded_rows():
    """The Loaded models panel, by model name: (state, where, memory)."""
    rows = driver.find_elements(By.CSS_SELECTOR, "#loaded-table tbody tr")
    cells = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    return {c[0]: (row.get_attribute("data-state"), c[4], c[3]) for row, c in zip(rows, cells)}


def port_of(where):
    assert where.startswith("port "), where
    return int(where.split()[1])


def listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def server_pid(port):
    """The process whose command line serves `port` (llama-server or llama_cpp.server)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                arguments = file.read().split(b"\0")
        except OSError:
            continue
        if b"--port" in arguments and arguments[arguments.index(b"--port") + 1] == str(port).encode():
            return int(entry)
    return None


def chat(text, tokens=8):
    limit = driver.find_element(By.NAME, "maxTokens")
    limit.clear()
    limit.send_keys(str(tokens))
    driver.find_element(By.NAME, "message").send_keys(text)
    driver.find_element(By.ID, "send").click()
    status = lambda: driver.find_element(By.ID, "reply-status").get_attribute("data-state")
    wait.until(lambda _: status() in ("done", "failed"))
    assert status() == "done", driver.find_element(By.ID, "reply-status").text
    reply = driver.find_elements(By.CSS_SELECTOR, '#conversation li[data-role="assistant"]')[-1]
    assert reply.get_attribute("data-finish") == "length" and reply.find_element(By.CLASS_NAME, "text").text
    return reply.find_element(By.CLASS_NAME, "text").text


@flow("use-embeddings")
def _():
    driver.get(launch)
    wait.until(lambda d: d.current_url == base + "/models")
    shot("models")
    row_button("demo-embed", 'button[data-action="use"]').click()
    wait.until(lambda d: d.current_url == base + "/embeddings?model=demo-embed")
    wait.until(lambda _: model_status()[0] in ("ready", "failed"))
    assert model_status() == ("ready", "demo-embed is loaded."), model_status()
    assert "demo-embed" in driver.find_element(By.ID, "source").text
    driver.find_element(By.ID, "compare").click()
    wait.until(lambda d: d.find_element(By.ID, "similarity").is_displayed())
    assert "Most alike" in driver.find_element(By.ID, "closest").text
    assert "32 dimensions" in driver.find_element(By.ID, "dimensions").text
    shot("embeddings-used")


@flow("download-use-chat")
def _():
    driver.get(base + "/models")
    row_button("demo-llama", 'button[data-action="download"]').click()
    wait.until(lambda _: row_button("demo-llama", "button[data-action]").get_attribute("data-action") == "use")
    row_button("demo-llama", 'button[data-action="use"]').click()
    wait.until(lambda d: d.current_url == base + "/chat?model=demo-llama")
    wait.until(lambda _: model_status()[0] in ("ready", "failed"))
    assert model_status() == ("ready", "demo-llama is loaded."), model_status()
    results["values"]["reply"] = chat("hello")
    shot("chat-used")


@flow("loaded-panel")
def _():
    driver.get(base + "/models")
    wait.until(lambda _: {"demo-embed", "demo-llama"} <= set(loaded_rows()))
    rows = loaded_rows()
    assert rows["demo-embed"][:2] == ("ready", "in this process"), rows
    state, where, memory = rows["demo-llama"]
    assert state == "ready" and "in RAM" in memory and "estimated" in memory, rows
    results["values"]["llama_port"] = port_of(where)
    assert listening(port_of(where))
    shot("loaded-panel")


def servers_of(model_file):
    """The live processes whose command line names `model_file` (zombies, whose command line is empty, excluded)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                if model_file.encode() in file.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


@flow("load-twice-one-runtime")
def _():
    # From cold: unloaded first, then two loads sent at once.
    driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch("/api/ui/models/demo-llama/unload", {method: "POST", credentials: "same-origin",
            headers: {"Content-Type": "application/json"}, body: "{}"}).then(() => done(), (e) => done(String(e)));""")
    deadline = time.monotonic() + 30
    while servers_of("demo-llama.gguf") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert servers_of("demo-llama.gguf") == [], "the server outlived Unload"
    answers = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const load = () => fetch("/api/ui/models/demo-llama/load", {method: "POST", credentials: "same-origin",
            headers: {"Content-Type": "application/json"}, body: "{}"}).then((r) => r.json());
        Promise.all([load(), load()]).then(done, (e) => done(String(e)));""")
    ports = {next(r for r in answer["rows"] if r["name"] == "demo-llama")["whereText"] for answer in answers}
    assert len(ports) == 1, answers
    servers = servers_of("demo-llama.gguf")
    assert len(servers) == 1, f"{len(servers)} servers run demo-llama: {servers}"
    results["values"]["llama_port"] = port_of(ports.pop())


@flow("crash-then-load-again")
def _():
    port = results["values"]["llama_port"]
    pid = server_pid(port)
    assert pid, f"no process serves port {port}"
    os.kill(pid, signal.SIGKILL)
    driver.get(base + "/models")
    wait.until(lambda _: loaded_rows().get("demo-llama", ("",))[0] == "failed")
    reason = driver.find_element(By.CSS_SELECTOR, 'tr[data-loaded="demo-llama"] .reason').text
    assert "stopped" in reason, reason
    shot("loaded-crashed")
    # Use opens Chat, which loads it again.
    driver.find_element(By.CSS_SELECTOR, 'tr[data-loaded="demo-llama"] a.button').click()
    wait.until(lambda _: model_status()[0] in ("ready", "failed"))
    assert model_status() == ("ready", "demo-llama is loaded."), model_status()
    chat("hello again")
    driver.get(base + "/models")
    wait.until(lambda _: loaded_rows().get("demo-llama", ("",))[0] == "ready")
    results["values"]["llama_port"] = port_of(loaded_rows()["demo-llama"][1])


@flow("unload-closes-the-port")
def _():
    port = results["values"]["llama_port"]
    driver.get(base + "/models")
    driver.find_element(By.CSS_SELECTOR, 'tr[data-loaded="demo-llama"] button[data-runtime="unload"]').click()
    wait.until(lambda _: "demo-llama" not in loaded_rows())
    assert "demo-llama is unloaded" in session.notice()
    deadline = time.monotonic() + 30
    while listening(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not listening(port), f"port {port} still answers after Unload"
    assert servers_of("demo-llama.gguf") == [], "a server still runs demo-llama after Unload"
    shot("unloaded")


@flow("download-use-transcribe")
def _():
    driver.get(base + "/models")
    row_button("demo-whisper", 'button[data-action="download"]').click()
    wait.until(lambda _: row_button("demo-whisper", "button[data-action]").get_attribute("data-action") == "use")
    row_button("demo-whisper", 'button[data-action="use"]').click()
    wait.until(lambda d: d.current_url == base + "/transcribe?model=demo-whisper")
    wait.until(lambda _: model_status()[0] in ("ready", "failed"))
    assert model_status() == ("ready", "demo-whisper is loaded."), model_status()
    driver.find_element(By.ID, "audio").send_keys(speech)
    driver.find_element(By.ID, "transcribe").click()
    state = lambda: driver.find_element(By.ID, "transcribe-status").get_attribute("data-state")
    wait.until(lambda _: state() in ("done", "failed"))
    assert state() == "done", driver.find_element(By.ID, "message").text
    text = driver.find_element(By.ID, "transcript-text").text.lower()
    assert "lemons" in text, text
    shot("transcribe-used")


@flow("too-big-is-refused")
def _():
    driver.get(base + "/models/demo-huge")
    estimate = driver.find_element(By.ID, "memory-estimate")
    assert "warning" in estimate.get_attribute("class") and "needs about" in estimate.text, estimate.text
    driver.find_element(By.CSS_SELECTOR, '.runtime button[data-runtime="load"]').click()
    wait.until(lambda d: d.find_element(By.ID, "message").is_displayed())
    message = driver.find_element(By.ID, "message").text
    assert "does not fit" in message and "needs about" in message, message
    assert driver.find_element(By.ID, "load-anyway").is_displayed()
    assert "demo-huge" not in driver.execute_script(
        "return fetch('/api/ui/runtimes').then((r) => r.text())"), "a refused model was loaded"
    shot("too-big-refused")


@flow("looks")
def _():
    session.looks({
        "models": base + "/models", "model-runtime": base + "/models/demo-llama",
        "model-unusable": base + "/models/demo-chat", "chat": base + "/chat?model=demo-llama",
        "embeddings": base + "/embeddings", "transcribe": base + "/transcribe"})


session.finish()
