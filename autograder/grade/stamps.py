"""Reading the times nbgrader writes in ``timestamp.txt``.

nbgrader writes ``datetime.now(zone).strftime("%Y-%m-%d %H:%M:%S.%f %Z")`` with the zone of
its ``Exchange.timezone`` setting (UTC by default), so the last word is what ``%Z`` gives:
``UTC``, or an abbreviation such as ``PST``, ``CEST`` or ``CST``. An abbreviation is read with
the tz database (Python's ``zoneinfo``): the course's own zone first (course.toml's
``[late] timezone``, nbgrader's ``Exchange.timezone``), then the North American names that
other zones reuse rarely (``PST`` is the Philippines' too; ``_USUAL``), else the one offset every
zone using that name had at that moment. A name that means several offsets then (``CST``: US
Central, Cuba or China) or none is not guessed: the stamp is unreadable, and the run lists it.
ISO forms (a ``T``, an offset such as ``+01:00`` or ``-0800``, ``Z``, no seconds) are read too.
"""

from __future__ import annotations

import functools
import re
import zoneinfo
from datetime import UTC, datetime, timedelta, timezone

# US and Canadian names, as nbgrader's users write them (each is also, rarely, another zone's).
_USUAL = {"PST": -8, "PDT": -7, "MST": -7, "MDT": -6, "CDT": -5, "EST": -5, "EDT": -4,
          "AKST": -9, "AKDT": -8, "HST": -10}
_NAMED = re.compile(r"(.+?)\s+([A-Za-z][A-Za-z0-9_/+-]{0,40})")
_OFFSET = re.compile(r"(.+?)\s*([+-])(\d\d):?(\d\d)")


def _iso(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


@functools.cache
def _zones() -> tuple[zoneinfo.ZoneInfo, ...]:
    return tuple(zoneinfo.ZoneInfo(key) for key in sorted(zoneinfo.available_timezones()))


@functools.cache
def _offsets(name: str, local: datetime) -> frozenset[timedelta]:
    """The UTC offsets of the zones that call ``local`` (naive) ``name``."""
    found = set()
    for zone in _zones():
        when = local.replace(tzinfo=zone)
        if when.tzname() == name:
            found.add(when.utcoffset())
    return frozenset(found)


def read(text: str, zone: str | None = None) -> tuple[datetime | None, str]:
    """(the time, aware), or (None, why it cannot be read)."""
    text = text.strip()
    if not text:
        return None, "it is empty"
    when = _iso(re.sub(r"\s*(UTC|GMT|Z)$", "+00:00", text, flags=re.IGNORECASE))
    if when is not None:
        return (when.replace(tzinfo=UTC) if when.tzinfo is None else when), ""
    offset = _OFFSET.fullmatch(text)
    if offset and (local := _iso(offset[1])) is not None and local.tzinfo is None:
        delta = timedelta(hours=int(offset[3]), minutes=int(offset[4]))
        return local.replace(tzinfo=timezone(delta if offset[2] == "+" else -delta)), ""
    named = _NAMED.fullmatch(text)
    local = _iso(named[1]) if named else None
    if named is None or local is None or local.tzinfo is not None:
        return None, f"{text[:80]!r} is not a date and time"
    name = named[2]
    if "/" in name or name in zoneinfo.available_timezones():
        try:
            return local.replace(tzinfo=zoneinfo.ZoneInfo(name)), ""
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            return None, f"unknown time zone {name!r}"
    if zone:
        try:
            own = local.replace(tzinfo=zoneinfo.ZoneInfo(zone))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            own = None
        if own is not None and own.tzname() == name:
            return own, ""
    if name in _USUAL:
        return local.replace(tzinfo=timezone(timedelta(hours=_USUAL[name]))), ""
    offsets = _offsets(name, local.replace(fold=0))
    if len(offsets) == 1:
        return local.replace(tzinfo=timezone(next(iter(offsets)))), ""
    if offsets:
        shown = ", ".join(sorted(_hours(o) for o in offsets))
        return None, (f"the zone name {name} means several offsets ({shown}); set the "
                      f"course's zone ([late] timezone in course.toml)")
    return None, f"unknown time zone name {name!r}"


def _hours(offset: timedelta) -> str:
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
