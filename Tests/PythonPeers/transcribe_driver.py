"""Drives `modeldepot ui --transcribe-local …`'s Transcribe screen in a real headless Chromium.

Usage: python transcribe_driver.py LAUNCH_URL SCREENSHOTS_DIR SPEECH_FILE NOT_AUDIO_FILE
A recording chosen in the file field comes back as text, timed rows and downloadable SRT/WebVTT; a file that
is not audio is refused with the reason on the page, and the next recording still works. axe-core runs in
every state and on the page light and dark, wide and phone-sized. Prints one JSON object like ui_driver.py's.
"""
import sys

from selenium.webdriver.common.by import By

from browser_session import BrowserSession

launch, shots, speech, not_audio = sys.argv[1:5]
base = launch.split("/session")[0]
session = BrowserSession(shots, patience=120)
driver, wait, results, shot, flow = session.driver, session.wait, session.results, session.shot, session.flow


def state():
    return driver.find_element(By.ID, "transcribe-status").get_attribute("data-state")


def choose_and_send(path):
    driver.find_element(By.ID, "audio").send_keys(path)
    driver.find_element(By.ID, "transcribe").click()


@flow("transcribe")
def _():
    driver.get(launch)
    wait.until(lambda d: d.current_url == base + "/models")
    driver.get(base + "/transcribe")
    assert "whisper-tiny-en-ct2" in driver.find_element(By.ID, "source").text
    shot("transcribe-empty")
    driver.find_element(By.ID, "word-timestamps").click()
    choose_and_send(speech)
    wait.until(lambda _: state() in ("done", "failed"))
    assert state() == "done", driver.find_element(By.ID, "message").text
    text = driver.find_element(By.ID, "transcript-text").text.lower()
    assert "lemons" in text and "punch" in text, text
    rows = driver.find_elements(By.CSS_SELECTOR, "#segments tbody tr")
    assert len(rows) >= 1 and rows[0].find_elements(By.TAG_NAME, "td")[0].text.startswith("0:00.0–"), rows[0].text
    for link in ("download-srt", "download-vtt"):
        assert driver.find_element(By.ID, link).get_attribute("href").startswith("blob:")
    # The page's Content-Security-Policy keeps scripts from reading blob: URLs; the same text is shown.
    srt = driver.execute_script("return document.getElementById('srt-text').textContent")
    assert srt.startswith("1\n00:00:00,000 --> "), srt[:80]
    notes = driver.find_element(By.ID, "notes").text
    assert "no word timings" in notes, notes
    results["values"]["summary"] = driver.find_element(By.ID, "summary").text
    shot("transcribe-done")


@flow("refusal")
def _():
    driver.get(base + "/transcribe")
    choose_and_send(not_audio)
    wait.until(lambda _: state() == "failed")
    message = driver.find_element(By.ID, "message")
    assert message.is_displayed() and "is not audio ModelDepot recognises" in message.text, message.text
    assert driver.find_element(By.ID, "transcribe").is_enabled()
    shot("transcribe-refused")
    # The next recording still works, and the refusal is cleared.
    driver.find_element(By.ID, "audio").clear()
    choose_and_send(speech)
    wait.until(lambda _: state() == "done")
    assert not driver.find_element(By.ID, "message").is_displayed()


@flow("looks")
def _():
    session.looks({"transcribe": base + "/transcribe"})


session.finish()
