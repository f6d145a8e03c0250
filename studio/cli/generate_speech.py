"""`studio generate EXPORT_DIR --audio FILE [...]` for a speech (Whisper) export: transcribe the clip with the
exported encoder + decoder-with-past graphs (studio.generate.speech) and print the transcript, or with --json
the token ids, text, TTFT and tokens/s. The text-only flags are an InputError naming the flag."""

from __future__ import annotations

import argparse
import json
import sys


def run_speech(args: argparse.Namespace) -> int:
    from studio.core.errors import InputError
    from studio.generate.sampling import SamplingOptions
    from studio.generate.speech import speech_request

    if args.runtime != "studio" or args.io_binding:
        flag = "--runtime" if args.runtime != "studio" else "--io-binding"
        raise InputError(f"{flag} is not available for speech exports", offending=flag,
                         hint="the speech loop is the studio's session.run loop; drop the flag")
    if args.threads is not None and args.threads < 1:
        raise InputError(f"--threads must be >= 1, got {args.threads}", offending="--threads", hint="for example 1")
    sampling = SamplingOptions(args.temperature, args.top_k, args.top_p, args.seed).check()
    stream = args.stream and not args.json

    def show(piece: str) -> None:
        sys.stdout.write(piece)
        sys.stdout.flush()

    result = speech_request(args.export_dir, args.audio, prompt=args.prompt, prompt_ids=args.prompt_ids,
                            image=args.image, max_new_tokens=args.max_new_tokens, sampling=sampling,
                            stop_token_ids=args.stop_token_id, hf_parity=args.hf_parity, threads=args.threads,
                            on_text=show if stream else None)
    if args.json:
        print(json.dumps({**result.to_dict(), "audio": str(args.audio)}, indent=2))
        return 0
    if stream:
        print()
    else:
        print(result.text)
    parity = result.hf_parity.get("this_clip")
    verdict = f", HF parity: {'match' if parity['match'] else 'MISMATCH'}" if isinstance(parity, dict) else ""
    print(f"[{len(result.token_ids)} tokens, {result.finish_reason}; ttft {result.ttft_ms:.2f} ms, "
          f"{result.tokens_per_s:.0f} tokens/s{verdict}]", file=sys.stderr)
    return 0
