from tests.browser import browser, browsing

__all__ = ["browser", "browsing"]
