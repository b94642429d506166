"""Driving the Dagster UI as a person does: open a page, click what is on it, read what it
shows. Each helper names what a person would look for, so a test reads as the steps it takes
and only this file changes when the UI does. Waits poll the page with a bound (playwright's
own waits); nothing sleeps for a condition."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Page, Response, expect

#: Debian's Chromium; playwright's own browser download cannot be used here
CHROMIUM = Path("/usr/bin/chromium")
LOCATION = "shopsync"
#: the statuses a run's page shows once the run has ended
RUN_ENDED = ("Success", "Failure", "Canceled")
#: how long a page may take to show something that is already there (a busy machine)
SHOWN = 60_000
#: the window's height for a picture of a dialog longer than the page's window
TALL = 2400
RUN_PAGE = re.compile(r"/runs/([0-9a-f]{8}-[0-9a-f-]{27})")


@dataclass
class Launch:
    """A run launched from the UI, and when its launch button was clicked (monotonic)."""

    run_id: str
    clicked: float


@dataclass
class Materialization:
    """What an asset's Status section says of its latest materialization (or of the latest
    attempt, when that failed)."""

    run_id: str
    tag: str  # "Failed in 9fc93f4b"; the run's link alone ("10 seconds ago") when it succeeded
    icon: str  # "run_success", "check_failed"


@dataclass
class Screenshots:
    """``NN-what.png`` in ``folder``, numbered in the order taken: what the test saw."""

    folder: Path
    taken: int = 0

    def take(self, page: Page, what: str, full_page: bool = True) -> Path:
        """The whole page; ``full_page=False``: what the window shows (a dialog over it)."""
        self.taken += 1
        path = self.folder / f"{self.taken:02d}-{what}.png"
        page.screenshot(path=path, full_page=full_page)
        return path


@dataclass
class DagsterUI:
    """The Dagster UI at ``url``, seen through ``page``."""

    page: Page
    url: str
    shots: Screenshots

    def goto(self, path: str) -> None:
        self.page.goto(self.url + path)

    # -- the code location --------------------------------------------------------------------

    def wait_location_loaded(self, timeout: float) -> None:
        """The Deployment page lists the location as loaded."""
        self.goto("/locations")
        expect(self.page.get_by_role("link", name=LOCATION).first).to_be_visible(timeout=SHOWN)
        expect(self.page.get_by_text(re.compile(r"^Loaded"))).to_be_visible(timeout=timeout * 1000)

    def reload_location(self, timeout: float) -> float:
        """Click the location's Reload; the seconds until Dagster has loaded it again (the
        reload request answers when the code server has built the definitions anew)."""
        self.goto("/locations")
        reload = self.page.get_by_role("button").filter(has_text=re.compile(r"^Reload$"))
        with self.page.expect_response(_graphql("ReloadRepositoryLocationMutation"),
                                       timeout=timeout * 1000):
            started = time.monotonic()
            reload.click()
        seconds = time.monotonic() - started
        expect(self.page.get_by_text(re.compile(r"^Loaded"))).to_be_visible(timeout=SHOWN)
        return seconds

    # -- launching a job and following its run ------------------------------------------------

    def launch_job(self, job: str, launch_timeout: float = 120) -> Launch:
        """Open the job's page and launch it with its own button ("Materialize all"); follow
        the toast's View link to the run's page: the run, and when the button was clicked.
        (Partitioned assets or required config would ask first, in a dialog.)"""
        self.goto(f"/locations/{LOCATION}/jobs/{job}")
        button = self.page.get_by_role("button").filter(has_text=re.compile(r"^Materialize"))
        expect(button).to_be_enabled(timeout=SHOWN)
        self.shots.take(self.page, f"job-{job}")
        clicked = time.monotonic()
        button.click()
        dialog = self.page.get_by_role("dialog")
        toast = self.page.get_by_text(re.compile(r"^Launched run \w+"))
        expect(dialog.or_(toast).first).to_be_visible(timeout=launch_timeout * 1000)
        assert not dialog.is_visible(), f"launching {job} asked first: {dialog.inner_text()}"
        notifications = self.page.get_by_role("region", name=re.compile(r"^Notifications"))
        notifications.get_by_role("link", name="View", exact=True).click()
        self.page.wait_for_url(RUN_PAGE, timeout=SHOWN)
        found = RUN_PAGE.search(self.page.url)
        assert found is not None, self.page.url
        return Launch(found.group(1), clicked)

    def wait_run_finished(self, timeout: float) -> str:
        """Watch the run's page until the status next to the run's id says it ended (the
        page follows the run by itself); that status."""
        ended = self.page.get_by_text(re.compile(rf"^({'|'.join(RUN_ENDED)})$")).first
        expect(ended).to_be_visible(timeout=timeout * 1000)
        return ended.inner_text()

    def run_duration(self) -> float:
        """The run's duration as its page shows it (H:MM:SS): from its start to its end,
        without the launch and the queue before it."""
        clock = self.page.get_by_role("img", name="timer", exact=True)
        shown = self.page.locator("div").filter(has=clock).filter(
            has_text=re.compile(r"^\d+:\d\d:\d\d$")).last  # the header's tag, not a step's
        expect(shown).to_be_visible(timeout=SHOWN)
        hours, minutes, seconds = (int(part) for part in shown.inner_text().split(":"))
        return hours * 3600 + minutes * 60 + seconds

    def launch_from_launchpad(self, job: str, config: str, launch_timeout: float = 120) -> Launch:
        """Open the job's launchpad (its Materialize button's menu: "Open launchpad"), put
        ``config`` (YAML) in its editor in place of what is there, as pasted, and launch it
        once the launchpad has checked the config: the run (its page opens by itself)."""
        self.goto(f"/locations/{LOCATION}/jobs/{job}")
        menu = self.page.get_by_role("button").filter(
            has=self.page.get_by_role("img", name="arrow_drop_down"))
        expect(menu.first).to_be_enabled(timeout=SHOWN)
        menu.first.click()
        self.page.get_by_role("menuitem", name="Open launchpad").click()
        dialog = self.page.get_by_role("dialog")
        editor = dialog.locator(".CodeMirror")
        expect(editor).to_be_visible(timeout=SHOWN)
        editor.click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.insert_text(config)  # a paste: no auto-indent of each line
        launch = dialog.get_by_role("button").filter(has_text=re.compile(r"^Materialize$"))
        expect(launch).to_be_enabled(timeout=SHOWN)  # disabled while "Checking config…"
        expect(dialog.get_by_text("No errors", exact=True)).to_be_visible(timeout=SHOWN)
        self.shots.take(self.page, f"launchpad-{job}", full_page=False)
        clicked = time.monotonic()
        launch.click()
        self.page.wait_for_url(RUN_PAGE, timeout=launch_timeout * 1000)
        found = RUN_PAGE.search(self.page.url)
        assert found is not None, self.page.url
        return Launch(found.group(1), clicked)

    def run_steps(self, status: str = "Succeeded") -> list[str]:
        """The steps the run's page lists under ``status`` ("Errored", "Not executed"…: its
        side panel's sections, opened when closed)."""
        header = self.page.get_by_text(re.compile(rf"^{status} \(\d+\)$"))
        expect(header).to_be_visible(timeout=SHOWN)
        count = int(re.findall(r"\d+", header.inner_text())[0])
        bar = header.locator("..")
        if bar.get_attribute("aria-expanded") != "true":
            header.click()
        panel = self.page.locator(f'[id="{bar.get_attribute("aria-controls")}"]')
        steps = panel.get_by_text(re.compile(r"^\w+$"))
        expect(steps).to_have_count(count, timeout=SHOWN)
        return [step.inner_text() for step in steps.all()]

    def step_failures(self) -> list[str]:
        """The run's log filtered to its step failures (typed in the log's filter box, as a
        person would): each failure's message, which names the step and the error."""
        box = self.page.get_by_placeholder("Filter…")
        box.fill("type:STEP_FAILURE")
        box.press("Enter")
        tags = self.page.get_by_text("STEP_FAILURE", exact=True)
        expect(tags.first).to_be_visible(timeout=SHOWN)
        # a row: its event type's column, then the message's
        return [tag.locator("xpath=../../following-sibling::div[1]").inner_text()
                for tag in tags.all()]

    # -- automation ---------------------------------------------------------------------------

    def automations(self, names: list[str]) -> dict[str, tuple[bool, str]]:
        """The Automation page: for each schedule or sensor of ``names``, whether its switch
        is on and the description its info icon shows (hovered)."""
        self.goto("/automation")
        found: dict[str, tuple[bool, str]] = {}
        shown = ""  # the tooltip of the row before: it stays until the next one replaces it
        for name in names:
            link = self.page.locator(f'a[href$="/schedules/{name}"], a[href$="/sensors/{name}"]')
            expect(link).to_be_visible(timeout=SHOWN)
            row = self.page.locator("div").filter(has=link).last
            boxes = row.get_by_role("checkbox")  # the row's selection, then its switch
            expect(boxes).to_have_count(2, timeout=SHOWN)
            row.get_by_role("img", name="info").hover()
            tip = self.page.get_by_role("tooltip")
            expect(tip).to_be_visible(timeout=SHOWN)
            expect(tip).not_to_have_text(shown, timeout=SHOWN)
            shown = tip.inner_text()
            found[name] = (boxes.last.is_checked(), shown.strip())
            self.page.keyboard.press("Escape")  # the tooltip would cover the next row's icon
            expect(tip).to_be_hidden(timeout=SHOWN)
        return found

    # -- an asset's page ----------------------------------------------------------------------

    def open_asset(self, key: str) -> AssetPage:
        """The asset's page, ``key`` as its path: ``demo_shop/orders``."""
        self.goto(f"/assets/{key}")
        asset = AssetPage(self.page, self.shots)
        expect(self.page.get_by_text("Latest materialization")).to_be_visible(timeout=SHOWN)
        return asset


@dataclass
class AssetPage:
    page: Page
    shots: Screenshots

    def tab(self, name: str) -> None:
        """One of the asset's tabs (Overview, Events, Checks, Lineage)."""
        self.page.get_by_role("tab", name=name, exact=True).first.click()

    def latest_materialization(self) -> Materialization:
        """The Status section's latest materialization: its icon, when, and by which run."""
        self.tab("Overview")
        label = self.page.get_by_text("Latest materialization", exact=True)
        link = self.page.locator('a[href^="/runs/"]').first
        expect(link).to_be_visible(timeout=SHOWN)
        tag = self.page.locator("div").filter(has=label).filter(has=link).last
        found = RUN_PAGE.search(link.get_attribute("href") or "")
        assert found is not None, link.get_attribute("href")
        shown = " ".join(tag.locator("div").filter(has=link).last.inner_text().split())
        return Materialization(run_id=found.group(1), tag=shown,
                               icon=tag.get_by_role("img").first.get_attribute("aria-label") or "")

    def failed_attempt(self) -> tuple[str, str]:
        """The Events tab of an asset whose latest attempt failed: its alert ("Run 9fc93f4b
        failed, and did not materialize this asset.") and what its selected event, the latest
        materialization, says of itself ("Materialized in run 2b81c8f7")."""
        self.tab("Events")
        alert = self.page.get_by_text(re.compile(r"^Run \w+ failed"))
        latest = self.page.get_by_text(re.compile(r"^Materialized in run \w+$"))
        expect(alert).to_be_visible(timeout=SHOWN)
        expect(latest.first).to_be_visible(timeout=SHOWN)
        return alert.inner_text().strip(), latest.first.inner_text().strip()

    def metadata(self, key: str, shot: str | None = None) -> str:
        """The value of a key in the latest materialization's metadata table, as shown; a
        value shown behind "[Show Markdown]" or "[Show JSON]" is opened and read (and
        screenshot as ``shot``)."""
        self.tab("Overview")
        row = self.page.get_by_role("row").filter(
            has=self.page.get_by_role("cell", name=key, exact=True)).first
        expect(row).to_be_visible(timeout=SHOWN)
        value = row.locator(":scope > td").last
        hidden = value.get_by_text(re.compile(r"^\[Show (Markdown|JSON)\]$"))
        if not hidden.count():
            return value.inner_text().strip()
        window = self.page.viewport_size
        if shot and window:  # a window tall enough for the whole dialog, for its picture
            self.page.set_viewport_size({"width": window["width"], "height": TALL})
        hidden.click()
        dialog = self.page.get_by_role("dialog")
        expect(dialog).to_be_visible(timeout=SHOWN)
        text = dialog.inner_text()
        if shot and window:
            self.shots.take(self.page, shot, full_page=False)
            self.page.set_viewport_size(window)
        dialog.get_by_role("button", name="Close").click()
        return text

    def table(self, key: str, first_column: str) -> dict[str, dict[str, str]]:
        """A table in a metadata value (a table value, or one in its Markdown), by the text
        of its first column: ``{"orders": {"visible": "195", …}, …}``."""
        text = self.metadata(key)
        lines = text.splitlines()
        header = next(i for i, line in enumerate(lines)
                      if line.split("\t")[0].strip() == first_column)
        names = [cell.strip() for cell in lines[header].split("\t")]
        rows: dict[str, dict[str, str]] = {}
        for line in lines[header + 1:]:
            cells = [cell.strip() for cell in line.split("\t")]
            if len(cells) != len(names):
                break
            rows[cells[0]] = dict(zip(names, cells, strict=True))
        return rows

    def lineage(self) -> dict[str, set[str]]:
        """The Overview's Lineage section: ``{"upstream": {"demo_shop/customers", …},
        "downstream": {…}}``, the keys of the assets each list links to."""
        self.tab("Overview")
        lists = {}
        for direction in ("upstream", "downstream"):
            heading = self.page.get_by_text(f"{direction.capitalize()} assets", exact=True)
            assets = self.page.locator('a[href^="/assets/"]')
            column = self.page.locator("div").filter(has=heading).filter(has=assets).last
            expect(column.locator(assets).first).to_be_visible(timeout=SHOWN)
            lists[direction] = {(link.get_attribute("href") or "").removeprefix("/assets/")
                                for link in column.locator(assets).all()}
        return lists

    def lineage_graph(self, shows: list[str]) -> None:
        """The Lineage tab's graph (the asset and its nearest neighbours), once it shows a
        node of each of ``shows``."""
        self.tab("Lineage")
        for name in shows:
            expect(self.page.get_by_text(name, exact=True).first).to_be_visible(timeout=SHOWN)

    def open_checks(self) -> dict[str, str]:
        """The Checks tab: each check's name and the status its list shows."""
        self.tab("Checks")
        heading = self.page.get_by_text(re.compile(r"^Checks \(\d+\)$"))
        expect(heading).to_be_visible(timeout=SHOWN)
        count = int(re.findall(r"\d+", heading.inner_text())[0])
        # each entry: the name (its full text in a title, as long names are cut) and a status
        entries = self.page.locator("span:has(> [title]):has(> span)")
        expect(entries).to_have_count(count, timeout=SHOWN)
        statuses = {}
        for entry in entries.all():
            name, status = entry.inner_text().splitlines()[-2:]
            statuses[name.strip()] = status.strip()
        return statuses

    def open_check(self, name: str) -> str:
        """Click a check in the list: the text of the pane it opens (its description, its
        latest execution and that execution's metadata)."""
        self.page.locator(f'[title="{name}"]').first.click()
        pane = self.page.locator("div").filter(
            has=self.page.locator('[aria-label="asset_check"]')).filter(
            has=self.page.get_by_text("Latest execution", exact=True)).last
        # the pane shows the check it was opened on until it has loaded this one
        expect(pane.get_by_text(name, exact=True).first).to_be_visible(timeout=SHOWN)
        expect(pane.get_by_text("Evaluation result", exact=True)).to_be_visible(timeout=SHOWN)
        return pane.inner_text()


def _graphql(operation: str) -> Callable[[Response], bool]:
    """Matches the answer to the UI's GraphQL request ``operation``."""
    def match(response: Response) -> bool:
        return "graphql" in response.url and operation in (response.request.post_data or "")
    return match
