"""Drives `modeldepot ui --chat-local …`'s Chat and Embeddings playgrounds in a real headless Chromium.

Usage: python playground_driver.py LAUNCH_URL SCREENSHOTS_DIR
A reply streams and ends at its token limit with its usage; a long reply is stopped mid-way and the next one
still works; identical sentences are the most alike. axe-core runs in every state and on both pages light and
dark, wide and phone-sized. Prints one JSON object like ui_driver.py's.
"""
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from browser_session import BrowserSession

launch, shots = sys.argv[1], sys.argv[2]
base = launch.split("/session")[0]
session = BrowserSession(shots, patience=120)
driver, wait, results, shot, flow = session.driver, session.wait, session.results, session.shot, session.flow


def status():
    return driver.find_element(By.ID, "reply-status")


def last_reply():
    return driver.find_elements(By.CSS_SELECTOR, '#conversation li[data-role="assistant"]')[-1]


def ask(text, tokens):
    limit = driver.find_element(By.NAME, "maxTokens")
    limit.clear()
    limit.send_keys(str(tokens))
    driver.find_element(By.NAME, "message").send_keys(text)
    driver.find_element(By.ID, "send").click()


@flow("chat")
def _():
    driver.get(launch)
    wait.until(lambda d: d.current_url == base + "/models")
    driver.get(base + "/chat")
    assert "tiny-chat" in driver.find_element(By.ID, "source").text
    shot("chat-empty")
    driver.find_element(By.NAME, "system").send_keys("Answer briefly.")
    Select(driver.find_element(By.NAME, "preset")).select_by_value("precise")
    ask("hello", 8)
    wait.until(lambda _: status().get_attribute("data-state") == "done")
    text = status().text
    assert text.startswith("Cut off at the token limit. 8 tokens") and "tokens/s" in text, text
    assert last_reply().get_attribute("data-finish") == "length"
    assert last_reply().find_element(By.CLASS_NAME, "text").text != ""
    results["values"]["usage"] = text
    shot("chat-replied")


@flow("stop")
def _():
    # On a phone, a reply that grows past the screen must leave Stop on screen, uncovered, and clickable.
    driver.set_window_size(375, 812)
    ask("tell me a long story", 4000)
    wait.until(lambda d: d.execute_script(
        "return document.documentElement.scrollHeight > window.innerHeight + 300"))
    placement = driver.execute_script("""
        const stop = document.getElementById("stop"), box = stop.getBoundingClientRect();
        const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
        return {top: box.top, bottom: box.bottom, height: window.innerHeight, uncovered: top === stop,
                following: window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 60};""")
    results["values"]["stopWhileStreamingOnAPhone"] = placement
    assert placement["top"] >= 0 and placement["bottom"] <= placement["height"], placement
    assert placement["uncovered"] and placement["following"], placement
    shot("chat-streaming-phone")
    driver.find_element(By.ID, "stop").click()
    wait.until(lambda _: status().get_attribute("data-state") == "stopped")
    driver.set_window_size(1280, 1000)
    assert last_reply().get_attribute("data-state") == "stopped"
    assert driver.find_element(By.ID, "send").is_enabled()
    results["values"]["stoppedAfterCharacters"] = len(last_reply().find_element(By.CLASS_NAME, "text").text)
    shot("chat-stopped")
    # The model is free again: the next reply runs to its limit.
    ask("and now?", 4)
    wait.until(lambda _: status().get_attribute("data-state") == "done")
    assert len(driver.find_elements(By.CSS_SELECTOR, '#conversation li[data-role="assistant"]')) == 3


@flow("embeddings")
def _():
    driver.get(base + "/embeddings")
    shot("embeddings")
    box = driver.find_element(By.NAME, "sentences")
    box.clear()
    box.send_keys("the cat sat\nsomething else entirely\nthe cat sat")
    driver.find_element(By.ID, "compare").click()
    wait.until(lambda d: d.find_element(By.ID, "similarity").get_attribute("hidden") is None)
    cells = [c.text for c in driver.find_elements(By.CSS_SELECTOR, "#matrix tbody td")]
    assert len(cells) == 9 and cells[0] == "1.00" and cells[2] == "1.00", cells
    closest = driver.find_element(By.ID, "closest").text
    assert closest.startswith("Most alike: “the cat sat” and “the cat sat” (1.00)"), closest
    shot("embeddings-compared")


@flow("looks")
def _():
    session.looks({name: base + "/" + name for name in ("chat", "embeddings")})


session.finish()
