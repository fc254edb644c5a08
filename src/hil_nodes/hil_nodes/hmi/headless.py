"""A headless Chromium driven over the Chrome DevTools Protocol (CDP): open the HMI page, wait
for a text, click a button by its label, read the page's text, take a screenshot. For the page
tests and for the screenshot in docs/hmi.md; a browser is no part of the HMI itself.

Debian's ``chromium`` package and the ``websockets`` client viser already depends on are all it
takes (Playwright or Selenium would bring a driver of their own and expect a browser build of
their own); CDP is the protocol both of those speak underneath. WebGL runs on SwiftShader
(software), so the 3D view renders on a machine without a GPU.
"""
from __future__ import annotations

import base64
import itertools
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

from websockets.sync.client import connect

BROWSERS = ('chromium', 'chromium-browser', 'google-chrome')


def find_browser() -> str | None:
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


class HeadlessPage:
    """One headless browser with one page; use as a context manager (the browser is always ended)."""

    def __init__(self, width: int = 1280, height: int = 800, browser: str | None = None):
        browser = browser or find_browser()
        if browser is None:
            raise FileNotFoundError('no chromium on PATH (apt-get install chromium)')
        self._profile = tempfile.mkdtemp(prefix='hmi_chromium_')
        self._proc = subprocess.Popen(
            [browser, '--headless=new', '--no-sandbox', '--remote-debugging-port=0', f'--user-data-dir={self._profile}',
             f'--window-size={width},{height}', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
             '--no-first-run', '--no-default-browser-check', '--disable-extensions', 'about:blank'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self._ids = itertools.count(1)
        self._ws = None
        try:
            port = self._devtools_port(timeout=30.0)
            page = next(t for t in self._json(port, 'list') if t.get('type') == 'page')
            self._ws = connect(page['webSocketDebuggerUrl'], max_size=64 * 2**20, open_timeout=10)
            self.call('Page.enable')
            self.call('Emulation.setDeviceMetricsOverride', width=width, height=height, deviceScaleFactor=1,
                      mobile=False)
        except BaseException:
            self.close()
            raise

    def _devtools_port(self, timeout: float) -> int:
        active = pathlib.Path(self._profile) / 'DevToolsActivePort'
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if active.exists() and active.read_text().strip():
                return int(active.read_text().split()[0])
            if self._proc.poll() is not None:
                raise RuntimeError(f'chromium exited with {self._proc.returncode} before its DevTools port was open')
            time.sleep(0.05)
        raise TimeoutError('chromium did not open its DevTools port')

    @staticmethod
    def _json(port: int, what: str):
        with urllib.request.urlopen(f'http://127.0.0.1:{port}/json/{what}', timeout=10) as resp:
            return json.loads(resp.read())

    def call(self, method: str, timeout: float = 120.0, **params):
        """Send one CDP command and return its result (events in between are skipped). The
        timeout is for a browser that no longer answers, not a speed limit: WebGL in software on
        two loaded slow cores (calibration 1.1 s) made one screenshot take 30.3 s and a text read
        9 s, the renderer busy drawing the 3D view, and a 30 s limit once failed a page test."""
        mid = next(self._ids)
        self._ws.send(json.dumps({'id': mid, 'method': method, 'params': params}))
        end = time.monotonic() + timeout
        while True:
            msg = json.loads(self._ws.recv(timeout=max(0.01, end - time.monotonic())))
            if msg.get('id') == mid:
                if 'error' in msg:
                    raise RuntimeError(f'{method}: {msg["error"]}')
                return msg.get('result', {})

    def open(self, url: str) -> None:
        self.call('Page.navigate', url=url)

    def evaluate(self, expression: str):
        result = self.call('Runtime.evaluate', expression=expression, returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in result:
            raise RuntimeError(f'page script failed: {result["exceptionDetails"]}')
        return result['result'].get('value')

    def text(self) -> str:
        return self.evaluate('document.body ? document.body.innerText : ""') or ''

    def wait_for(self, predicate, timeout: float = 30.0, what: str = 'the page'):
        """Poll the page's text until ``predicate(text)`` is true; returns the text."""
        end = time.monotonic() + timeout
        text = ''
        while time.monotonic() < end:
            text = self.text()
            if predicate(text):
                return text
            time.sleep(0.1)
        raise TimeoutError(f'waited {timeout:g} s for {what}; the page shows: {text[-600:]!r}')

    def click(self, label: str) -> None:
        """Click the button whose text is ``label``."""
        found = self.evaluate(
            '(() => { const b = [...document.querySelectorAll("button")].find(e => e.innerText.trim() === '
            + json.dumps(label) + '); if (b) { b.click(); } return !!b; })()')
        if not found:
            raise LookupError(f'no button {label!r} on the page')

    def box(self, element_js: str) -> tuple[float, float, float, float] | None:
        """(x, y, width, height) in CSS px of the element the expression ``element_js`` gives, or None."""
        return self.evaluate('(() => { const e = ' + element_js + '; if (!e) return null; '
                             'const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()')

    def mouse_click(self, x: float, y: float) -> None:
        """A real left click at (x, y): the browser's own hit test decides what it lands on, as
        for an operator's mouse (an element hidden or covered there is not clicked)."""
        for kind, buttons in (('mouseMoved', 0), ('mousePressed', 1), ('mouseReleased', 0)):
            self.call('Input.dispatchMouseEvent', type=kind, x=x, y=y, button='left', buttons=buttons, clickCount=1)

    def button_box(self, label: str) -> tuple[float, float, float, float] | None:
        """The box of the button whose text is ``label`` if it is rendered and on top at its
        centre (what a click there would hit), else None."""
        return self.evaluate(
            '(() => { const b = [...document.querySelectorAll("button")].find(e => e.innerText.trim() === '
            + json.dumps(label) + '); if (!b) return null; const r = b.getBoundingClientRect(); '
            'if (r.width < 1 || r.height < 1) return null; '
            'const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); '
            'return hit && b.contains(hit) ? [r.x, r.y, r.width, r.height] : null; })()')

    def click_on_screen(self, label: str) -> None:
        """Click the button ``label`` with the mouse, where it is on screen; LookupError if it
        is not visible and on top."""
        box = self.button_box(label)
        if box is None:
            raise LookupError(f'no visible button {label!r} on the page')
        self.mouse_click(box[0] + box[2] / 2, box[1] + box[3] / 2)

    def canvas_ready(self) -> bool:
        return bool(self.evaluate('!!document.querySelector("canvas")'))

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call('Page.captureScreenshot', format='png')['data'])

    def close(self) -> None:
        if self._ws is not None:
            try:
                self._ws.close()
            except Exception:
                pass
        # the whole session (start_new_session): chromium's GPU, renderer and zygote processes
        # too, which outlived a terminated browser and kept a core busy rendering in software
        # while the next tests measured real time
        for sig in (signal.SIGTERM, signal.SIGKILL):      # (what is left after the browser's exit: killed)
            try:
                os.killpg(self._proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> 'HeadlessPage':
        return self

    def __exit__(self, *exc) -> None:
        self.close()
