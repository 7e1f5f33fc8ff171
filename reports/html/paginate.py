"""Fixed-size pages for long tables, so that no page of the report grows with the dataset."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, Sequence, TypeVar

T = TypeVar("T")

PAGE_SIZE = 200


@dataclass
class Page(Generic[T]):
    number: int              # 1-based
    count: int               # pages in all
    items: Sequence[T]
    first: int               # 1-based index of the first item, 0 when empty
    total: int
    href: Callable[[int], str]

    @property
    def last(self) -> int:
        return self.first + len(self.items) - 1 if self.items else 0

    @property
    def links(self) -> list[tuple[int, str]]:
        """Page numbers to show: first, last, and two either side of this one."""
        wanted = {1, self.count} | set(range(self.number - 2, self.number + 3))
        return [(n, self.href(n)) for n in sorted(wanted) if 1 <= n <= self.count]


def paginate(items: Sequence[T], href: Callable[[int], str], size: int = PAGE_SIZE) -> list[Page[T]]:
    """Always at least one page, so that an empty list still gets a page saying so."""
    size = max(1, size)
    count = max(1, -(-len(items) // size))
    return [Page(n + 1, count, items[n * size:(n + 1) * size], n * size + 1 if items else 0, len(items), href)
            for n in range(count)]
