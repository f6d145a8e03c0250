"""``studio-rknn-env create|check|path``: make, check or locate the toolkit's environment."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from studio.cli.translate import translate_parser
    from studio.core.catalogue import N_, _, tr
    from studio_rknn import env as envmod

    # help and errors in the user's language (the plugin's catalogue; argparse's own words the studio's)
    ap = argparse.ArgumentParser(prog="studio-rknn-env",
                                 description=N_("make, check or locate the rknn-toolkit2 environment"))
    ap.add_argument("command", choices=["create", "check", "path"],
                    help=N_("create: make it; check: say whether it works; path: print its folder"))
    ap.add_argument("--env", type=Path, help=N_(f"environment folder (default: ${envmod.ENV_VAR} or the cache)"))
    ap.add_argument("--force", action="store_true", help=N_("create: remake it even when it checks out"))
    ap.add_argument("--deep", action="store_true", help=N_("check: also import the toolkit in it"))
    ap.add_argument("--json", action="store_true", help=N_("check: print the status as JSON"))
    translate_parser(ap)
    args = ap.parse_args(argv)
    where = args.env or envmod.env_dir()
    if args.command == "path":
        print(where)
        return 0
    if args.command == "create":
        from studio.cli.progress import job_progress

        try:
            with job_progress("rknn-env") as job:
                envmod.ensure_env(job, env=where, force=args.force)
        except Exception as exc:
            print(tr("error: {message}", message=_(str(exc))), file=sys.stderr)
            return 1
    status = envmod.check_env(where, deep=args.deep or args.command == "create")
    if args.json:
        print(json.dumps({"ok": status.ok, "path": str(status.path), "reason": status.reason,
                          "versions": status.versions, "size_bytes": status.size_bytes,
                          "created_seconds": status.created_seconds}, indent=1))
    else:
        print(tr("ok: {reason}", reason=_(status.reason)) if status.ok
              else tr("not usable: {reason}", reason=_(status.reason)))
        if status.ok and status.size_bytes:
            print(tr("  size {size} GiB, created in {seconds} s", size=f"{status.size_bytes / 2**30:.2f}",
                     seconds=status.created_seconds))
    return 0 if status.ok else 1


if __name__ == "__main__":
    sys.exit(main())
