"""What every browser driver here shares: a headless Chromium (Debian's chromium and chromedriver, selenium 4.51),
explicit waits, a screenshot and an axe-core audit (axe-selenium-python 2.1.6) of each state, flows that report a
failure and let the others run, every page light and dark, wide and phone-sized, and the closing verdict.

A driver makes one session and calls finish() last; it prints one JSON object, {"flows": {name: "ok" or what
failed}, "axe": {state: [serious or critical violations]}, "values": {...}}, and exits 0 when every flow passed and
axe found nothing serious.
"""
import json, os, shutil, sys, traceback

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait


def chromium():
    """A new headless Chromium at 1280x1000."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000"]:
        options.add_argument(argument)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


class BrowserSession:
    def __init__(self, shots, patience=60, ignore_missing=True):
        """`shots` is emptied first (only this run's screens). Waits give up after `patience` seconds; a condition
        that meets an element a live update replaced (or, with `ignore_missing`, one not there yet) is asked again."""
        shutil.rmtree(shots, ignore_errors=True)
        os.makedirs(shots)
        self.shots = shots
        self.results = {"flows": {}, "axe": {}, "values": {}}
        self.driver = chromium()
        ignored = [StaleElementReferenceException] + ([NoSuchElementException] if ignore_missing else [])
        self.wait = WebDriverWait(self.driver, patience, poll_frequency=0.05, ignored_exceptions=ignored)

    def audit(self, name):
        """axe-core on the page as it is now: the serious and critical violations, by rule, with where."""
        axe = Axe(self.driver)
        axe.inject()
        found = axe.run(options='{"resultTypes": ["violations"]}')["violations"]
        bad = [v for v in found if v.get("impact") in ("serious", "critical")]
        self.results["axe"][name] = [
            v["id"] + ": " + "; ".join(n["html"][:120] for n in v["nodes"][:3]) for v in bad]

    def shot(self, name):
        """A screenshot of this state, and axe run on it."""
        self.driver.save_screenshot(os.path.join(self.shots, name + ".png"))
        self.audit(name)

    def flow(self, name):
        """Runs the decorated function at once as the flow `name`: a failure is recorded (with a screenshot), and
        the next flow still runs."""
        def run(body):
            try:
                body()
                self.results["flows"][name] = "ok"
            except Exception as error:  # noqa: BLE001 - the flow's failure is its result
                self.driver.save_screenshot(os.path.join(self.shots, "failed-" + name + ".png"))
                self.results["flows"][name] = f"{type(error).__name__}: {error} at {traceback.format_exc(limit=3)}"
            return body
        return run

    def notice(self):
        """The page's notice text, '' when hidden. Read in one script call: finding the element and then asking for
        its text races live updates that replace it (seen under a full test run's load)."""
        return self.driver.execute_script(
            "const box = document.getElementById('notice'); return box && !box.hidden ? box.innerText : ''")

    def looks(self, pages):
        """Every page ({name: URL}) light and dark, wide and phone-sized: the color scheme took, nothing scrolls
        sideways at 375 px, a screenshot `look-<name>-<scheme>-<size>` and an axe audit of each."""
        driver = self.driver
        for scheme in ("light", "dark"):
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                   {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            for size, (width, height) in {"wide": (1280, 1000), "phone": (375, 812)}.items():
                driver.set_window_size(width, height)
                for name, url in pages.items():
                    driver.get(url)
                    self.wait.until(lambda d: d.execute_script("return document.readyState") == "complete")
                    dark = driver.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches")
                    assert dark == (scheme == "dark"), scheme
                    if size == "phone":
                        overflow = driver.execute_script(
                            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
                        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at 375px"
                    driver.save_screenshot(os.path.join(self.shots, f"look-{name}-{scheme}-{size}.png"))
                    self.audit(f"{name}-{scheme}-{size}")

    def finish(self):
        """Closes the browser, prints the results and exits with the verdict."""
        self.driver.quit()
        print(json.dumps(self.results))
        axe_clean = all(not found for found in self.results["axe"].values())
        sys.exit(0 if all(v == "ok" for v in self.results["flows"].values()) and axe_clean else 1)
