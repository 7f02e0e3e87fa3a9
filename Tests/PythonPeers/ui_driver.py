"""Drives `modeldepot ui` in a real headless Chromium (Debian's chromium and chromedriver, selenium 4.51).

Usage: MIRROR_URL=… CACHE_DIR=… python ui_driver.py LAUNCH_URL MIRROR_ROOT SCREENSHOTS_DIR
Runs each flow with explicit waits (never sleeps), saves a screenshot of every state it reaches and runs
axe-core (axe-selenium-python 2.1.6) there, then every page light and dark, wide and phone-sized. Prints one
JSON object: {"flows": {name: "ok" or what failed}, "axe": {state: [serious or critical rule ids]},
"values": {...}}. Exit status 0 when every flow passed and axe found nothing serious.
Run by Tests/CLITests/WebUIBrowserTests.swift, which prepares the mirror, the catalog and the cache.
"""
import glob, os, statistics, sys, time, urllib.error, urllib.request

from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browser_session import BrowserSession, chromium

launch, mirror_root, shots = sys.argv[1], sys.argv[2], sys.argv[3]
mirror_url = os.environ["MIRROR_URL"]
base = launch.split("/session")[0]
cache_dir = os.environ["CACHE_DIR"]
session = BrowserSession(shots, ignore_missing=False)
driver, wait, results, shot, audit, flow, notice = (
    session.driver, session.wait, session.results, session.shot, session.audit, session.flow, session.notice)


def tab_to(matches, limit=80):
    """Presses Tab until the focused element satisfies `matches`: proves it is reachable by keyboard."""
    for _ in range(limit):
        driver.switch_to.active_element.send_keys(Keys.TAB)
        if matches(driver.switch_to.active_element):
            return driver.switch_to.active_element
    raise AssertionError("not reachable with Tab")


def storage_row(repo):
    return driver.find_element(By.CSS_SELECTOR, f'tr[data-repo="{repo}"]')


def storage_button(repo, action):
    return storage_row(repo).find_element(By.CSS_SELECTOR, f'button[data-storage="{action}"]')


def row(name):
    return driver.find_element(By.CSS_SELECTOR, f'tr[data-row="{name}"]')


def badge(name):
    return row(name).find_element(By.CSS_SELECTOR, "[data-badge]").text


def press(name, label=None):
    find = lambda: row(name).find_element(By.CSS_SELECTOR, "button[data-action]")
    if label is not None:
        wait.until(lambda _: find().text == label)
    click(find)


def click(find):
    """Clicks what `find` returns once it is there, again if the page replaced it in between."""
    def attempt(_):
        try:
            find().click()
            return True
        except (StaleElementReferenceException, NoSuchElementException):
            return False
    wait.until(attempt)


@flow("session")
def _():
    driver.get(launch)
    wait.until(lambda d: d.current_url == base + "/models")
    assert "token=" not in driver.current_url
    cookies = driver.get_cookies()
    assert any(c["name"].startswith("modeldepot_ui_") and c["httpOnly"] and c.get("sameSite") == "Strict" for c in cookies), cookies
    shot("models")


@flow("browse")
def _():
    driver.get(base + "/models")
    Select(driver.find_element(By.NAME, "capability")).select_by_value("transcription")
    driver.find_element(By.CSS_SELECTOR, ".filters button").click()
    wait.until(lambda d: "capability=transcription" in d.current_url)
    names = [r.get_attribute("data-row") for r in driver.find_elements(By.CSS_SELECTOR, "tr[data-row]")]
    assert names and "ui-big" not in names and "ui-small" in names, names
    search = driver.find_element(By.NAME, "q")
    search.send_keys("cancel me")
    driver.find_element(By.CSS_SELECTOR, ".filters button").click()
    wait.until(lambda d: "q=cancel" in d.current_url)
    assert driver.find_elements(By.CSS_SELECTOR, "p.empty"), "an empty filter says so"
    shot("models-filtered")
    hub = driver.find_element(By.NAME, "hub")
    hub.send_keys("big")
    hub.submit()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.hub-results"))
    assert "acme/big" in driver.find_element(By.CSS_SELECTOR, "table.hub-results").text
    shot("models-hub-search")
    driver.get(base + "/models?q=ui-")
    driver.find_element(By.LINK_TEXT, "ui-big").click()
    wait.until(lambda d: d.current_url.endswith("/models/ui-big"))
    facts = driver.find_element(By.CSS_SELECTOR, "dl.facts").text
    assert "acme/big" in facts, facts
    files = driver.find_element(By.CSS_SELECTOR, "table.files").text
    assert "weights.bin" in files and "6.0 MiB" in files, files
    assert "Downloading fetches 6.0 MiB" in driver.find_element(By.CSS_SELECTOR, ".plan").text
    shot("model-detail")


def limit(megabytes):
    """Sets the app's bandwidth limit from the Downloads page (0: none) and waits until the page shows it."""
    driver.get(base + "/downloads")
    before = driver.find_element(By.ID, "bandwidth-text").text
    box = driver.find_element(By.NAME, "megabytes")
    box.clear()
    box.send_keys(str(megabytes))
    box.send_keys(Keys.ENTER)
    wait.until(lambda d: d.find_element(By.ID, "bandwidth-text").text != before)


def chart_read(figure):
    """What a chart draws, read in one script call: the page redraws it four times a second, so elements looked up
    one by one go stale between calls."""
    return driver.execute_script("""
        const svg = arguments[0].querySelector("svg"), limit = svg.querySelector("line.limit");
        return {top: Number(svg.dataset.plotTop), bottom: Number(svg.dataset.plotBottom),
                maximum: Number(svg.dataset.maximum),
                lines: [...svg.querySelectorAll("polyline.line")].map((line) => line.getAttribute("points")),
                limit: limit && {value: Number(limit.dataset.value), y: Number(limit.getAttribute("y1"))},
                caption: arguments[0].querySelector("figcaption")?.textContent || ""};""", figure)


def chart_rates(figure):
    """The rates a throughput chart draws, read back from its SVG: each stretch's points, y turned into bytes/s."""
    drawn = chart_read(figure)
    top, bottom, maximum = drawn["top"], drawn["bottom"], drawn["maximum"]
    stretches = []
    for line in drawn["lines"]:
        points = [tuple(map(float, point.split(","))) for point in line.split()]
        stretches.append([(x, (bottom - y) / (bottom - top) * maximum) for x, y in points])
    return stretches, drawn


def check_throughput_chart(samples, limit_bytes):
    """The Downloads chart follows the rate measured from the progress bar (within 20 %), and its limit line is at
    the limit set."""
    figure = driver.find_element(By.ID, "throughput")
    (first_time, first_bytes), (last_time, last_bytes) = samples[0], samples[-1]
    measured = (last_bytes - first_bytes) / (last_time - first_time)
    stretches, read = chart_rates(figure)
    top, bottom, maximum = read["top"], read["bottom"], read["maximum"]
    assert stretches, "the chart draws the download"
    # The last three whole seconds (the first second of a download is partly before it began).
    drawn = statistics.median(rate for _, rate in stretches[-1][-3:])
    assert abs(drawn - measured) <= 0.2 * measured, f"the chart says {drawn:.0f} B/s, the bar moved {measured:.0f} B/s"
    assert read["limit"] and read["limit"]["value"] == limit_bytes, read["limit"]
    expected_y = bottom - limit_bytes / maximum * (bottom - top)
    assert abs(read["limit"]["y"] - expected_y) <= 0.2, (read["limit"], expected_y)
    caption = read["caption"]
    assert caption.startswith("Last 2 minutes: All downloads now ") and "Limit 488.3 KiB/s" in caption, caption
    results["values"]["chart"] = {"drawn": round(drawn), "measured": round(measured), "limitY": expected_y}


def download_flow():
    driver.get(base + "/models?q=ui-")
    assert badge("ui-big") == "Not downloaded"
    press("ui-big", "Download")
    wait.until(lambda d: badge("ui-big").startswith("Downloading"))
    driver.get(base + "/downloads")
    item = lambda: driver.find_element(By.CSS_SELECTOR, 'li[data-download="ui-big"]')
    values = []
    timed = []  # (seconds, bytes) from the bar, to hold the chart to
    total = (6 << 20) + 8

    def rising(_):
        value = float(item().find_element(By.TAG_NAME, "progress").get_attribute("value") or 0)
        if not values or value != values[-1]:
            values.append(value)
            timed.append((time.monotonic(), value * total))
        return value >= 0.3

    wait.until(rising)
    # Three whole seconds of steady flow drawn, then the chart is held to the bar's own rate over them.
    wait.until(lambda _: rising(_) and sum(len(s) for s in chart_rates(driver.find_element(By.ID, "throughput"))[0]) >= 4)
    since = time.monotonic() - 3
    check_throughput_chart([sample for sample in timed if sample[0] >= since], 500_000)
    shot("downloads")
    click(lambda: item().find_element(By.CSS_SELECTOR, 'button[data-action="pause"]'))
    wait.until(lambda _: item().get_attribute("data-state") == "paused")
    paused_at = float(item().find_element(By.TAG_NAME, "progress").get_attribute("value"))
    # Paused: the line stops short of "now" while the time axis moves on (the gap).
    wait.until(lambda _: chart_rates(driver.find_element(By.ID, "throughput"))[0][-1][-1][0] < 590)
    shot("downloads-paused")
    click(lambda: item().find_element(By.CSS_SELECTOR, 'button[data-action="resume"]'))

    def finished(_):
        rising(_)
        return item().get_attribute("data-state") == "completed"

    wait.until(finished)
    rising(None)  # the last value, written with the state that ended the wait
    assert values == sorted(values), f"the bar went back: {values}"
    assert values[-1] == 1.0 and paused_at <= values[-1], values
    results["values"]["progress"] = values
    # Flow, the pause's gap, flow again: at least two stretches; the download's own chart shows the same.
    wait.until(lambda _: len(chart_rates(driver.find_element(By.ID, "throughput"))[0]) >= 2)
    assert len(chart_rates(item().find_element(By.CSS_SELECTOR, "figure.chart-row"))[0]) >= 2
    shot("downloads-chart-done")
    driver.find_element(By.ID, "throughput").screenshot(os.path.join(shots, "chart-downloads.png"))
    driver.get(base + "/models?q=ui-")
    assert badge("ui-big") == "Ready", badge("ui-big")


@flow("download")
def _():
    # The mirror caps each response, but the engine adds connections while they add speed: on a busy machine the
    # whole file could land before Pause. The app's own limit bounds the total, so Pause lands mid-way.
    limit(0.5)
    try:
        download_flow()
    finally:
        limit(0)


@flow("cancel")
def _():
    driver.get(base + "/models?q=ui-")
    press("ui-cancel", "Download")
    driver.get(base + "/downloads")
    item = lambda: driver.find_element(By.CSS_SELECTOR, 'li[data-download="ui-cancel"]')
    wait.until(lambda _: item().get_attribute("data-state") in ("downloading", "pending"))
    click(lambda: item().find_element(By.CSS_SELECTOR, 'button[data-action="cancel"]'))
    wait.until(lambda _: item().get_attribute("data-state") == "cancelled")
    assert item().find_element(By.CSS_SELECTOR, ".failure").text == "", "cancelling is not an error"
    shot("downloads-cancelled")


@flow("retry")
def _():
    driver.get(base + "/models?q=ui-")
    press("ui-ghost", "Download")
    wait.until(lambda _: badge("ui-ghost") == "Download failed")
    reason = row("ui-ghost").find_element(By.CSS_SELECTOR, "[data-reason]").text
    assert "not found" in reason, reason
    shot("models-failed")
    folder = os.path.join(mirror_root, "acme", "ghost")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "ghost.txt"), "w") as file:
        file.write("boo\n")
    press("ui-ghost", "Retry")
    wait.until(lambda _: badge("ui-ghost") == "Ready")


@flow("repair")
def _():
    driver.get(base + "/models?q=ui-")
    assert badge("ui-broken") == "Damaged", badge("ui-broken")
    reason = row("ui-broken").find_element(By.CSS_SELECTOR, "[data-reason]").text
    assert "weights.bin" in reason and "expected" in reason, reason
    shot("models-damaged")
    press("ui-broken", "Repair")
    wait.until(lambda _: badge("ui-broken") == "Ready")


@flow("onboarding")
def _():
    driver.get(base + "/onboarding/ui-small")
    section = lambda: driver.find_element(By.CSS_SELECTOR, ".onboarding")
    assert section().get_attribute("data-step") == "offer"
    assert "needs" in driver.find_element(By.ID, "onboarding-message").text
    shot("onboarding-offer")
    click(lambda: driver.find_element(By.ID, "onboarding-action"))
    wait.until(lambda _: section().get_attribute("data-step") == "ready")
    wait.until(lambda d: d.find_element(By.ID, "onboarding-action").text == "Continue")
    shot("onboarding-ready")
    click(lambda: driver.find_element(By.ID, "onboarding-action"))
    wait.until(lambda d: d.current_url.endswith("/models/ui-small"))


@flow("refusals")
def _():
    # Another site's page cannot start a download: the cookie is SameSite=Strict and Origin is checked.
    driver.get(mirror_url + "/api/models")
    status = driver.execute_async_script(
        """const done = arguments[arguments.length - 1];
        fetch(arguments[0] + '/api/ui/models/ui-cancel/download', {method: 'POST', credentials: 'include',
              headers: {'Content-Type': 'application/json'}, body: '{}'})
          .then(r => done(r.status)).catch(e => done('blocked: ' + e));""", base)
    assert status != 200, status
    results["values"]["crossSiteStatus"] = status
    # Without the cookie (a fresh browser), pages say to open the link.
    fresh = chromium()
    try:
        fresh.get(base + "/models")
        assert "Open the link" in fresh.find_element(By.TAG_NAME, "h1").text
        fresh.get(launch)  # the one-time link was used already
        assert "does not open" in fresh.find_element(By.TAG_NAME, "h1").text
    finally:
        fresh.quit()
    # A foreign Host header (DNS rebinding) is refused.
    request = urllib.request.Request(base + "/models", headers={"Host": "rebound.example:80"})
    try:
        urllib.request.urlopen(request)
        raise AssertionError("a foreign Host was answered")
    except urllib.error.HTTPError as error:
        assert error.code == 421, error.code


@flow("storage")
def _():
    driver.get(base + "/storage")
    repos = [r.get_attribute("data-repo") for r in driver.find_elements(By.CSS_SELECTOR, "tr[data-repo]")]
    assert {"acme/big", "acme/small", "acme/broken"} <= set(repos), repos
    assert "free on this disk" in driver.find_element(By.CSS_SELECTOR, ".totals").text
    # The chart: the whole cache, then each repository by size, on one scale.
    chart = driver.find_element(By.ID, "storage-chart")
    bars = [g.get_attribute("data-label") for g in chart.find_elements(By.CSS_SELECTOR, "g.bar")]
    assert bars[0] == "Whole cache" and {"acme/big", "acme/small", "acme/broken"} <= set(bars[1:]), bars
    assert bars.index("acme/big") < bars.index("acme/broken") < bars.index("acme/small"), bars
    assert chart.find_element(By.TAG_NAME, "figcaption").text.startswith("The cache takes "), chart.text
    shot("storage")
    # Pin and unpin.
    click(lambda: storage_button("acme/big", "pin"))
    wait.until(lambda _: "is pinned" in notice())
    assert "Pinned" in storage_row("acme/big").text
    assert storage_button("acme/big", "unpin").text == "Unpin"
    shot("storage-pinned")
    # Verify finds the damage done below, offers Repair, and Repair fixes it.
    blob = max(glob.glob(os.path.join(cache_dir, "models--acme--small", "blobs", "*")), key=os.path.getsize)
    with open(blob, "r+b") as file:
        file.write(b"X")
    click(lambda: storage_button("acme/small", "verify"))
    wait.until(lambda _: "damaged" in notice())
    shot("storage-damaged")
    click(lambda: storage_button("acme/small", "repair"))
    wait.until(lambda _: "repaired" in notice())
    with open(blob, "rb") as file:
        assert file.read(1) != b"X"
    # Delete by keyboard alone: Tab to the button, Enter opens the confirmation (which says what it frees),
    # Escape keeps the model, then Shift+Tab from "Keep it" to "Delete" and Enter deletes.
    button = tab_to(lambda e: e.get_attribute("data-storage") == "delete"
                    and e.get_attribute("data-id") == "acme/small")
    button.send_keys(Keys.ENTER)
    dialog = lambda: driver.find_element(By.ID, "confirm")
    wait.until(lambda _: dialog().get_attribute("open") is not None)
    text = driver.find_element(By.ID, "confirm-text").text
    assert text.startswith("Delete acme/small? This frees ") and "12 B" in text, text
    assert driver.switch_to.active_element.get_attribute("id") == "confirm-no"
    shot("storage-confirm-delete")
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait.until(lambda _: dialog().get_attribute("open") is None)
    assert storage_row("acme/small")
    storage_button("acme/small", "delete").send_keys(Keys.ENTER)
    wait.until(lambda _: dialog().get_attribute("open") is not None)
    driver.switch_to.active_element.send_keys(Keys.SHIFT, Keys.TAB)
    assert driver.switch_to.active_element.get_attribute("id") == "confirm-yes"
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    wait.until(lambda _: notice().startswith("Deleted acme/small: 12 B freed."))
    assert not driver.find_elements(By.CSS_SELECTOR, 'tr[data-repo="acme/small"]')
    shot("storage-deleted")
    # Prune to nothing: the preview names what goes and keeps the pinned one; then prune.
    box = driver.find_element(By.NAME, "gigabytes")
    box.send_keys("0")
    box.send_keys(Keys.ENTER)
    wait.until(lambda d: d.find_element(By.ID, "prune-summary").text.startswith("Removes "))
    summary = driver.find_element(By.ID, "prune-summary").text
    assert "acme/broken" in summary and "acme/big" not in summary, summary
    budget = driver.find_element(By.CSS_SELECTOR, "#storage-chart line.budget")
    assert budget.get_attribute("data-bytes") == "0", budget.get_attribute("data-bytes")
    assert "over the budget of 0 B" in driver.find_element(By.CSS_SELECTOR, "#storage-chart figcaption").text
    driver.find_element(By.ID, "storage-chart").screenshot(os.path.join(shots, "chart-storage.png"))
    shot("storage-prune-preview")
    click(lambda: driver.find_element(By.ID, "prune-apply"))
    wait.until(lambda _: notice().startswith("Removed "))
    repos = [r.get_attribute("data-repo") for r in driver.find_elements(By.CSS_SELECTOR, "tr[data-repo]")]
    assert repos == ["acme/big"], repos
    shot("storage-pruned")
    results["values"]["pruned"] = notice()


@flow("settings")
def _():
    driver.get(base + "/settings")
    status = driver.find_element(By.ID, "token-status")
    assert status.get_attribute("data-state") == "none", status.text
    assert driver.find_element(By.ID, "token-source").text == "none"
    assert driver.find_element(By.ID, "endpoint").text == mirror_url
    shot("settings")
    box = driver.find_element(By.NAME, "megabytes")
    box.clear()
    box.send_keys("2.5")
    box.send_keys(Keys.ENTER)
    wait.until(lambda d: d.find_element(By.ID, "bandwidth-text").text == "Now: 2.4 MiB/s")
    driver.get(base + "/settings")
    assert "2.4 MiB/s" in driver.find_element(By.ID, "network").text


@flow("looks")
def _():
    """Every page light and dark, wide and phone-sized, with axe run on each (contrast in dark too)."""
    pages = {"models": "/models", "model": "/models/ui-big", "downloads": "/downloads", "storage": "/storage",
             "settings": "/settings", "onboarding": "/onboarding/ui-small"}
    session.looks({name: base + path for name, path in pages.items()})


session.finish()
