"""Drives `modeldepot serve --ui`'s dashboard in a real headless Chromium (selenium 4.51, axe-selenium-python 2.1.6).

Usage: READ_TOKEN=… ADMIN_TOKEN=… FILE_URL=… python mirror_driver.py DASHBOARD_URL SCREENSHOTS_DIR
Signs in with the mirror's token (read-only), watches a pull a background client starts, signs in as the admin,
pins and evicts; axe-core runs in every state, and the page is shot light and dark, wide and phone-sized.
Prints one JSON object like ui_driver.py's; exit status 0 when every flow passed and axe found nothing serious.
"""
import os, sys, threading, urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_session import BrowserSession

dashboard, shots = sys.argv[1], sys.argv[2]
read_token, admin_token, file_url = os.environ["READ_TOKEN"], os.environ["ADMIN_TOKEN"], os.environ["FILE_URL"]
session = BrowserSession(shots)
driver, wait, results, shot, flow, notice = (
    session.driver, session.wait, session.results, session.shot, session.flow, session.notice)


def sign_in(token):
    box = driver.find_element(By.NAME, "token")
    box.send_keys(token)
    box.send_keys(Keys.ENTER)


def counter(key):
    return driver.find_element(By.CSS_SELECTOR, f'[data-counter="{key}"] .value').text


@flow("sign-in")
def _():
    driver.get(dashboard)
    assert "needs its token" in driver.find_element(By.TAG_NAME, "main").text
    shot("mirror-sign-in")
    sign_in(read_token)
    wait.until(lambda d: d.find_elements(By.ID, "counters"))
    assert "sign in with the admin token" in driver.find_element(By.ID, "read-only").text
    assert not driver.find_elements(By.CSS_SELECTOR, "button[data-mirror]"), "read-only: no buttons"
    shot("mirror-read-only")


@flow("pull")
def _():
    def fetch():
        request = urllib.request.Request(file_url, headers={"Authorization": "Bearer " + read_token})
        results["values"]["pulledBytes"] = len(urllib.request.urlopen(request).read())
    client = threading.Thread(target=fetch)
    client.start()
    bar = lambda: driver.find_element(By.CSS_SELECTOR, '#pulls li[data-pull="acme/big/weights.bin"] progress')
    wait.until(lambda _: float(bar().get_attribute("value")) > 0)
    wait.until(lambda _: counter("upstreamBytes") != "0 B")
    results["values"]["upstreamDuring"] = counter("upstreamBytes")
    shot("mirror-pulling")
    client.join()
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#pulls li"))
    wait.until(lambda _: counter("servedBytes") == "4.0 MiB")
    assert counter("upstreamBytes") == "4.0 MiB", counter("upstreamBytes")
    assert driver.find_elements(By.CSS_SELECTOR, 'tr[data-repo="acme/big"]')
    assert "127.0.0.1" in driver.find_element(By.ID, "clients").text
    # The last hour as four charts, each drawn (axis, time labels) with its sentence for screen readers.
    charts = driver.find_elements(By.CSS_SELECTOR, "#charts figure.chart")
    assert [c.get_attribute("data-chart-key") for c in charts] == ["bytes", "requests", "hits", "pulls"], charts
    for chart in charts:
        assert chart.find_elements(By.CSS_SELECTOR, "svg line.axis") and len(chart.find_elements(By.CSS_SELECTOR, "svg text.time-label")) == 3
        assert chart.find_element(By.TAG_NAME, "figcaption").text.startswith("Last hour: ")
    legend = driver.find_element(By.CSS_SELECTOR, 'figure[data-chart-key="bytes"] .legend').text
    assert "Served to clients" in legend and "Pulled from upstream" in legend, legend
    shot("mirror-pulled")


@flow("admin")
def _():
    sign_in(admin_token)
    pin = lambda: driver.find_element(By.CSS_SELECTOR, 'button[data-mirror="pin"]')
    wait.until(lambda _: pin())
    assert driver.find_element(By.ID, "read-only").get_attribute("hidden") is not None
    pin().click()
    wait.until(lambda _: "is pinned" in notice())
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, 'button[data-mirror="unpin"]'))
    shot("mirror-admin")
    driver.find_element(By.CSS_SELECTOR, 'button[data-mirror="evict"]').send_keys(Keys.ENTER)
    dialog = lambda: driver.find_element(By.ID, "confirm")
    wait.until(lambda _: dialog().get_attribute("open") is not None)
    assert "frees 4.0 MiB" in driver.find_element(By.ID, "confirm-text").text
    shot("mirror-confirm-evict")
    driver.find_element(By.ID, "confirm-yes").send_keys(Keys.ENTER)
    wait.until(lambda _: notice() == "Evicted acme/big: 4.0 MiB freed.")
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, 'tr[data-repo="acme/big"]'))
    wait.until(lambda _: counter("evictions") == "1")
    shot("mirror-evicted")


@flow("looks")
def _():
    session.looks({"mirror": dashboard})


session.finish()
