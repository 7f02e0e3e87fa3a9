"""Drives `modeldepot serve --ui`'s dashboard in a real headless Chromium (selenium 4.51, axe-selenium-python 2.1.6).

Usage: READ_TOKEN=… ADMIN_TOKEN=… FILE_URL=… python mirror_driver.py DASHBOARD_URL SCREENSHOTS_DIR
Signs in with the mirror's token (read-only), watches a pull a background client starts, signs in as the admin,
pins and evicts; axe-core runs in every state, and the page is shot light and dark, wide and phone-sized.
Prints one JSON object like ui_driver.py's; exit status 0 when every flow passed and axe found nothing serious.
"""
import json, os, shutil, sys, threading, traceback, urllib.request

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

dashboard, shots = sys.argv[1], sys.argv[2]
read_token, admin_token, file_url = os.environ["READ_TOKEN"], os.environ["ADMIN_TOKEN"], os.environ["FILE_URL"]
shutil.rmtree(shots, ignore_errors=True)  # only this run's screens
os.makedirs(shots)
results = {"flows": {}, "axe": {}, "values": {}}

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
wait = WebDriverWait(driver, 60, poll_frequency=0.05,
                     ignored_exceptions=[StaleElementReferenceException, NoSuchElementException])


def audit(name):
    axe = Axe(driver)
    axe.inject()
    found = axe.run(options='{"resultTypes": ["violations"]}')["violations"]
    bad = [v for v in found if v.get("impact") in ("serious", "critical")]
    results["axe"][name] = [v["id"] + ": " + "; ".join(n["html"][:120] for n in v["nodes"][:3]) for v in bad]


def shot(name):
    driver.save_screenshot(os.path.join(shots, name + ".png"))
    audit(name)


def flow(name):
    def run(body):
        try:
            body()
            results["flows"][name] = "ok"
        except Exception as error:
            driver.save_screenshot(os.path.join(shots, "failed-" + name + ".png"))
            results["flows"][name] = f"{type(error).__name__}: {error} at {traceback.format_exc(limit=3)}"
        return body
    return run


def sign_in(token):
    box = driver.find_element(By.NAME, "token")
    box.send_keys(token)
    box.send_keys(Keys.ENTER)


def counter(key):
    return driver.find_element(By.CSS_SELECTOR, f'[data-counter="{key}"] .value').text


def notice():
    # Read in one script call: finding the element and then asking for its text races live updates that
    # replace it ("Node with given id does not belong to the document", seen under a full test run's load).
    return driver.execute_script(
        "const box = document.getElementById('notice'); return box && !box.hidden ? box.innerText : ''")


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
    for scheme in ("light", "dark"):
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        for size, (width, height) in {"wide": (1280, 1000), "phone": (375, 812)}.items():
            driver.set_window_size(width, height)
            driver.get(dashboard)
            wait.until(lambda d: d.execute_script("return document.readyState") == "complete")
            if size == "phone":
                overflow = driver.execute_script(
                    "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
                assert overflow <= 0, f"the dashboard scrolls sideways by {overflow}px at 375px"
            driver.save_screenshot(os.path.join(shots, f"look-mirror-{scheme}-{size}.png"))
            audit(f"mirror-{scheme}-{size}")


driver.quit()
print(json.dumps(results))
axe_clean = all(not found for found in results["axe"].values())
sys.exit(0 if all(v == "ok" for v in results["flows"].values()) and axe_clean else 1)
