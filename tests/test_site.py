"""The documentation site (docs/conf.py): built from docs/ with every warning an error, served
on 127.0.0.1, and used in Debian's Chromium as a reader uses it.

The reader searches, follows a hit to its API entry, and clicks copy buttons; what lands on
the clipboard must be code, not a transcript, and a copied example must run in a fresh
interpreter and print what the page shows. The browser tests skip, saying why, where
Chromium, chromedriver or selenium is missing (``.ci/run`` installs the first two). With
``SITE_SHOTS=/some/folder`` they also save screenshots of a task page and an API page there.
"""

from __future__ import annotations

import code
import doctest
import functools
import http.server
import importlib
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
LIBRARY = sorted(p.stem for p in (ROOT / "devutils").glob("*.py") if not p.stem.startswith("_"))
TASK_PAGES = sorted(p.stem for p in DOCS.glob("*.md") if p.stem != "index")
PAGES = ["index", *TASK_PAGES, *(f"api/{name}" for name in LIBRARY)]
WAIT = 10  # seconds: the longest any one step in the browser may take
SENTINEL = "(the clipboard before the click)"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_every_library_module_has_one_generated_api_page() -> None:
    pages = {page.stem: page.read_text(encoding="utf-8") for page in (DOCS / "api").glob("*.md")}
    assert sorted(pages) == LIBRARY  # a new module needs its page, a removed one loses it
    for name, text in pages.items():
        assert f"\n.. automodule:: devutils.{name}\n" in text, name
        assert text.count("..") == 1, f"{name}: the page is generated: one directive only"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sphinx", reason="needs the site dependency group (--group site)")
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    completed = subprocess.run(
        [*command, "-d", str(out / ".doctrees"), str(DOCS), str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, f"the site build warned:\n{completed.stderr}"
    return out


def test_the_site_has_every_page_and_every_public_name(site: Path) -> None:
    for page in PAGES:
        assert (site / f"{page}.html").is_file(), page
    missing = []
    for name in LIBRARY:
        html = (site / "api" / f"{name}.html").read_text(encoding="utf-8")
        for public in importlib.import_module(f"devutils.{name}").__all__:
            if f'id="devutils.{name}.{public}"' in html:
                continue
            # a re-exported constant: linked to its entry in the module it comes from
            home = re.search(rf'href="(\w+)\.html#devutils\.\1\.{public}"', html)
            if home is None or f'id="devutils.{home[1]}.{public}"' not in (
                site / "api" / f"{home[1]}.html"
            ).read_text(encoding="utf-8"):
                missing.append(f"devutils.{name}.{public}")
    assert missing == []


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=WAIT)


@pytest.fixture(scope="module")
def browser(base_url: str) -> Iterator[WebDriver]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        pytest.skip("needs Chromium and chromedriver (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs the site group")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1280,1000")
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(chromedriver))
    try:
        driver.set_page_load_timeout(WAIT)
        driver.execute_cdp_cmd(
            "Browser.grantPermissions",
            {
                "origin": base_url.rstrip("/"),
                "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"],
            },
        )
        yield driver
    finally:
        driver.quit()


def wait(driver: WebDriver) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT, poll_frequency=0.05)


def read_clipboard(driver: WebDriver) -> str:
    script = (
        "const done = arguments[0]; navigator.clipboard.readText().then(done, e => done(null));"
    )
    text = driver.execute_async_script(script)
    assert text is not None, "the clipboard cannot be read"
    return str(text)


def click_copy(driver: WebDriver, block: WebElement) -> str:
    """Click the copy button of *block* (a ``div.highlight``) as a reader does; the clipboard."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    driver.execute_async_script(
        "navigator.clipboard.writeText(arguments[0]).then(arguments[1]);", SENTINEL
    )
    button = block.find_element(By.CSS_SELECTOR, "button.copy-code")
    driver.execute_script(
        "arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});", block
    )
    ActionChains(driver, duration=0).move_to_element(block).click(button).perform()
    wait(driver).until(lambda d: read_clipboard(d) != SENTINEL)
    return read_clipboard(driver)


def blocks(driver: WebDriver, page: str, base_url: str) -> list[tuple[WebElement, str]]:
    """The page's code blocks and the text each shows."""
    from selenium.webdriver.common.by import By

    driver.get(f"{base_url}{page}.html")
    found = driver.find_elements(By.CSS_SELECTOR, "div.highlight")
    return [
        (block, block.find_element(By.TAG_NAME, "pre").get_attribute("textContent") or "")
        for block in found
    ]


def is_transcript(text: str) -> bool:
    return text.lstrip().startswith(">>>")


def commands(lines: list[str]) -> list[str]:
    """A console block's commands: its ``$ `` lines, each with the lines its ``\\`` continues."""
    found: list[str] = []
    continued = False
    for line in lines:
        command = line if continued else line[2:] if line.startswith("$ ") else None
        if command is not None:
            found.append(command)
        continued = command is not None and line.endswith("\\")
    return found


def expected_copy(text: str) -> str:
    """What the copy button must give for a block showing *text* (docs/_static/copy.js).

    From a transcript, doctest's own reading of it: each statement, and an empty line after
    one of several lines; from a console block its commands; anything else as it is.
    """
    if is_transcript(text):
        sources = [example.source for example in doctest.DocTestParser().get_examples(text)]
        return "".join(s + "\n" if s.count("\n") > 1 else s for s in sources).rstrip()
    lines = text.rstrip("\n").splitlines()
    if any(line.startswith("$ ") for line in lines):
        return "\n".join(commands(lines))
    return "\n".join(lines)


def pastes_into_the_repl(copied: str) -> str | None:
    """None if *copied*, typed line by line into ``python -i``, is valid input; else why not.

    The REPL's rule, not a file's: an indented block must end with an empty line.
    """
    buffer: list[str] = []
    for line in [*copied.splitlines(), ""]:
        buffer.append(line)
        try:
            complete = code.compile_command("\n".join(buffer), "<paste>", "single")
        except (SyntaxError, ValueError, OverflowError) as error:
            return f"{error} after {buffer!r}"
        if complete is not None or not line.strip():
            buffer = []
    return None


@pytest.mark.parametrize("page", PAGES)
def test_every_copy_button_copies_code_not_a_transcript(
    browser: WebDriver, base_url: str, page: str
) -> None:
    wrong = []
    for block, text in blocks(browser, page, base_url):
        copied = click_copy(browser, block)
        if copied != expected_copy(text):
            wrong.append(f"shows:\n{text}\ncopies:\n{copied}")
        elif is_transcript(text) and (why := pastes_into_the_repl(copied)) is not None:
            wrong.append(f"shows:\n{text}\ncopies code that does not paste: {why}")
    assert wrong == [], "\n\n".join(wrong)


def runs_alone(text: str) -> bool:
    """Whether a ``>>>`` block shows no error and needs nothing it does not import."""
    examples = doctest.DocTestParser().get_examples(text)
    return all(example.exc_msg is None for example in examples) and "import" in examples[0].source


@pytest.mark.parametrize(
    "page",
    [page for page in TASK_PAGES if ">>> " in (DOCS / f"{page}.md").read_text(encoding="utf-8")],
)
def test_a_copied_example_runs_and_prints_what_the_page_shows(
    browser: WebDriver, base_url: str, page: str, tmp_path: Path
) -> None:
    block, text = next(
        (b, t) for b, t in blocks(browser, page, base_url) if is_transcript(t) and runs_alone(t)
    )
    copied = click_copy(browser, block)
    shots = os.environ.get("SITE_SHOTS")
    if shots and page == "dates":
        Path(shots).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(shots) / "task-page-dates.png"))

    fresh = [sys.executable, "-I", "-q"]
    as_file = subprocess.run(
        [*fresh, "-c", copied],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert as_file.returncode == 0, f"{copied}\n{as_file.stderr}"
    in_repl = subprocess.run(
        [*fresh, "-i"],
        input=copied + "\n\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert "Error" not in in_repl.stderr, in_repl.stderr
    shown = "".join(example.want for example in doctest.DocTestParser().get_examples(text))
    assert doctest.OutputChecker().check_output(shown, in_repl.stdout, FLAGS), (
        f"the page shows:\n{shown}\nthe pasted code printed:\n{in_repl.stdout}"
    )


def test_a_copied_command_runs_and_prints_what_the_page_shows(
    browser: WebDriver, base_url: str
) -> None:
    block, text = next(
        (b, t) for b, t in blocks(browser, "cli", base_url) if "$ devutils --version" in t
    )
    copied = click_copy(browser, block)
    assert copied == "devutils --version"
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    ran = subprocess.run(
        ["bash", "-c", copied],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path},
        timeout=60,
        check=False,
    )
    shown = [line for line in text.splitlines() if line and not line.startswith("$ ")]
    assert (ran.returncode, ran.stdout.splitlines()) == (0, shown)


def test_search_leads_to_the_api_entry(browser: WebDriver, base_url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get(f"{base_url}index.html")
    browser.find_element(By.CSS_SELECTOR, "form[role=search] input[name=q]").send_keys(
        "count_months", Keys.ENTER
    )
    summary = (By.CSS_SELECTOR, "#search-results p.search-summary")
    wait(browser).until(lambda d: d.find_element(*summary).text.startswith("Search finished"))
    hits = browser.find_elements(By.CSS_SELECTOR, "#search-results ul.search li a")
    targets = [str(hit.get_attribute("href")).split("#")[-1] for hit in hits]
    assert "devutils.dates.count_months" in targets
    hits[0].click()
    wait(browser).until(lambda d: "#" in d.current_url)
    anchor = browser.current_url.split("#")[-1]
    assert re.fullmatch(r"devutils\.(\w+)\.count_months", anchor), browser.current_url
    module = anchor.split(".")[1]
    assert browser.current_url.startswith(f"{base_url}api/{module}.html")
    entry = browser.find_element(By.ID, anchor)
    assert entry.tag_name == "dt"
    assert "count_months(" in entry.text
    shots = os.environ.get("SITE_SHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(shots) / f"api-page-{module}.png"))
