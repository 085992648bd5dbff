"""Parses one redmark calendar feed with the `icalendar` package and prints what it read as
JSON (tests/tests/calendar_feed.rs asserts on it): each event's times on its zone's wall clock,
the offset the feed's own VTIMEZONE gives there and the one the tz database gives, and each
free/busy period in UTC; a recurring event's rule, exceptions and the local starts they give
(expanded by python-dateutil, which icalendar depends on), and an instance's RECURRENCE-ID."""
import json
import sys
from datetime import timezone
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr
from icalendar import Calendar

raw = open(sys.argv[1], "rb").read()
cal = Calendar.from_ical(raw)
zones = {str(tz["TZID"]): tz.to_tz() for tz in cal.walk("VTIMEZONE")}


def minutes(delta):
    return int(delta.total_seconds() // 60)


def event(ev):
    start, end = ev.decoded("DTSTART"), ev.decoded("DTEND")
    tzid = ev["DTSTART"].params.get("TZID")
    local = start.replace(tzinfo=None)
    own = zones.get(tzid)
    return {
        "uid": str(ev["UID"]),
        "summary": str(ev["SUMMARY"]),
        "location": str(ev.get("LOCATION", "")),
        "status": str(ev["STATUS"]),
        "sequence": int(ev["SEQUENCE"]),
        "tzid": tzid,
        "local_start": local.isoformat(),
        "local_end": end.replace(tzinfo=None).isoformat(),
        "utc_start": start.astimezone(timezone.utc).isoformat(),
        "vtimezone_offset": minutes(local.replace(tzinfo=own).utcoffset()) if own else None,
        "tzdb_offset": minutes(local.replace(tzinfo=ZoneInfo(tzid)).utcoffset()) if tzid else None,
        "organizer": str(ev.get("ORGANIZER", "")),
        **recurrence(ev, local),
    }


def naive(values):
    """The local times an EXDATE or RECURRENCE-ID property (one or several) names."""
    found = values if isinstance(values, list) else [values]
    return [d.dt.replace(tzinfo=None) for v in found for d in getattr(v, "dts", [v])]


def recurrence(ev, local):
    rule = ev.get("RRULE")
    out = {"recurrence_id": None, "rrule": None, "exdates": [], "expanded": []}
    if "RECURRENCE-ID" in ev:
        out["recurrence_id"] = naive(ev["RECURRENCE-ID"])[0].isoformat()
    if rule is None:
        return out
    text = rule.to_ical().decode()
    exdates = naive(ev["EXDATE"]) if "EXDATE" in ev else []
    # The rule's UNTIL is UTC (RFC 5545 §3.3.10): expanded on the wall clock, so compared there.
    until = rule["UNTIL"][0]
    plain = ";".join(p for p in text.split(";") if not p.startswith("UNTIL="))
    last = until.astimezone(ev.decoded("DTSTART").tzinfo).replace(tzinfo=None)
    starts = rrulestr(plain, dtstart=local).between(local, last, inc=True)
    out.update({
        "rrule": text,
        "exdates": [d.isoformat() for d in exdates],
        "expanded": [d.isoformat() for d in starts if d not in exdates],
    })
    return out


def periods(fb):
    found = fb.get("FREEBUSY", [])
    found = found if isinstance(found, list) else [found]
    return [
        [p.dt[0].astimezone(timezone.utc).isoformat(), p.dt[1].astimezone(timezone.utc).isoformat()]
        for p in found
    ]


print(json.dumps({
    "name": str(cal.get("X-WR-CALNAME", "")),
    "version": str(cal["VERSION"]),
    "timezones": sorted(zones),
    "events": [event(e) for e in cal.walk("VEVENT")],
    "freebusy": [p for fb in cal.walk("VFREEBUSY") for p in periods(fb)],
    "round_trip": Calendar.from_ical(cal.to_ical()) == cal,
}))
