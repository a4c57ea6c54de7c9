"""licentia-verify: check licence keys and verdicts from the command line.

The products' public keys come from files, each a product as the
administration API shows it. One JSON object is printed per input; the
exit status is 0 when every input passes, 1 when one is refused, 2 on a
usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ._time import parse_time
from .check import check_verdict
from .errors import VerificationError
from .verdict import verify_verdict
from .verifier import Product, Verifier, product_from_json

_EPILOG = "FILE holds a product as GET /v1/admin/products/{id} answers it. With --batch, standard input holds one JSON string per line."


class _Usage(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="licentia-verify", epilog=_EPILOG)
    sub = p.add_subparsers(dest="command", required=True)
    key = sub.add_parser("key", help="verify licence keys", epilog=_EPILOG)
    key.add_argument("--product", action="append", required=True, metavar="FILE")
    verdict = sub.add_parser("verdict", help="verify, and with --machine-id, judge verdicts", epilog=_EPILOG)
    verdict.add_argument("--product", action="append", required=True, metavar="FILE")
    verdict.add_argument("--machine-id")
    verdict.add_argument("--licence-id")
    verdict.add_argument("--now", help="RFC 3339 time to judge at (default: now)")
    verdict.add_argument("--major", type=int, default=0)
    verdict.add_argument("--require-seat", action="store_true")
    for s in (key, verdict):
        s.add_argument("--batch", action="store_true")
        s.add_argument("input", nargs="?")
    return p


def _read_product(path: str) -> Product:
    try:
        with open(path, encoding="utf-8") as f:
            o = json.load(f)
        p = o["product"] if isinstance(o.get("product"), dict) else o
        return product_from_json(p)
    except (OSError, ValueError, AttributeError) as e:
        raise _Usage(f"{path}: {e}") from e


def _run(args: argparse.Namespace, verifier: Optional[Verifier], products: List[Product], s: str) -> Tuple[Dict[str, Any], bool]:
    try:
        if verifier is not None:
            k = verifier.verify_licence_key(s)
            return {"outcome": "valid", "product_id": k.product_id, "licence_id": k.licence_id, "public_key": k.public_key.hex()}, True
        if args.machine_id is None:
            return {"outcome": "valid", "verdict": verify_verdict(s, products[0]).to_json()}, True
        j = check_verdict(
            s, products[0], machine_id=args.machine_id, licence_id=args.licence_id,
            now=args.now, major=args.major, require_seat=args.require_seat,
        )
        out: Dict[str, Any] = {"outcome": "valid", "valid": j.valid}
        if j.reason is not None:
            out["reason"] = j.reason
        out.update(verdict=j.verdict.to_json(), seated=j.seated, stale=j.stale)
        return out, j.valid
    except VerificationError as e:
        return {"outcome": e.code}, False


def _inputs(args: argparse.Namespace) -> List[str]:
    if not args.batch:
        return [args.input]
    out = []
    for line in sys.stdin.read().split("\n"):
        if line.strip():
            s = json.loads(line)
            if not isinstance(s, str):
                raise ValueError("--batch: each line must be a JSON string")
            out.append(s)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.batch == (args.input is not None):
            raise _Usage(f"give one {args.command} or --batch")
        products = [_read_product(p) for p in args.product]
        verifier = None
        if args.command == "key":
            verifier = Verifier(*products)
        else:
            if len(products) > 1:
                raise _Usage("verdict takes one --product")
            if (args.machine_id is None) != (args.licence_id is None):
                raise _Usage("--machine-id and --licence-id go together")
            if args.now is not None:
                at = parse_time(args.now)
                if at is None:
                    raise _Usage("--now must be an RFC 3339 time")
                args.now = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=at)
    except (_Usage, ValueError) as e:
        print(f"licentia-verify: {e}", file=sys.stderr)
        return 2
    status = 0
    for s in _inputs(args):
        out, ok = _run(args, verifier, products, s)
        print(json.dumps(out))
        if not ok:
            status = 1
    return status
