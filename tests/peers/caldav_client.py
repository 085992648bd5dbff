"""A CalDAV client for tests/tests/caldav*.rs, the Python `caldav` package (pinned by
scripts/caldav-peer.sh) against a throwaway Radicale.

    caldav_client.py list BASE USER PASSWORD ROOM
        prints {"name": displayname, "events": [{uid, summary, start, tzid, status, comment}]}
    caldav_client.py add BASE USER PASSWORD ROOM UID ZONE LOCAL_START LOCAL_END SUMMARY
        adds an event at LOCAL_START..LOCAL_END (YYYY-MM-DDTHH:MM on ZONE's clock), written in
        UTC as a plain calendar client would; prints {"added": UID}
    caldav_client.py delete BASE USER PASSWORD ROOM UID
        deletes the event with that UID; prints {"deleted": UID}
    caldav_client.py retitle BASE USER PASSWORD ROOM UID SUMMARY
        rewrites the event's SUMMARY, every other property kept, as a calendar app's edit does;
        prints {"retitled": UID}
"""

import re

import json
import sys
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import caldav


def utc(local, zone):
    at = datetime.strptime(local, "%Y-%m-%dT%H:%M").replace(tzinfo=ZoneInfo(zone))
    return at.astimezone(timezone.utc)


def main():
    cmd, base, user, password, room = sys.argv[1:6]
    rest = sys.argv[6:]
    with caldav.DAVClient(url=base, username=user, password=password) as client:
        cal = client.calendar(url=base.rstrip("/") + "/" + room + "/")
        if cmd == "list":
            events = []
            for ev in cal.events():
                c = ev.icalendar_component
                start = c.get("dtstart")
                events.append(
                    {
                        "uid": str(c.get("uid")),
                        "summary": str(c.get("summary", "")),
                        "start": start.dt.isoformat(),
                        "tzid": start.params.get("TZID"),
                        "status": str(c.get("status", "")),
                        "comment": str(c.get("comment", "")),
                    }
                )
            print(json.dumps({"name": cal.get_display_name(), "events": events}))
        elif cmd == "add":
            uid, zone, start, end, summary = rest
            cal.add_event(
                uid=uid,
                dtstart=utc(start, zone),
                dtend=utc(end, zone),
                summary=summary,
            )
            print(json.dumps({"added": uid}))
        elif cmd == "retitle":
            uid, summary = rest
            ev = cal.event_by_uid(uid)
            ev.data = re.sub(r"(?m)^SUMMARY:.*$", lambda _: "SUMMARY:" + summary, ev.data)
            ev.save()
            print(json.dumps({"retitled": uid}))
        elif cmd == "delete":
            (uid,) = rest
            cal.event_by_uid(uid).delete()
            print(json.dumps({"deleted": uid}))
        else:
            sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
