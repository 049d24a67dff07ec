#!/usr/bin/env python3
"""What chance alone makes of spray's per-link spread (benchmarks/RESULTS.md section 68).

Each port run of a rotating path (PROTOCOL.md S7.7: 16 to 32 packets, drawn at random) lands on one of a plane's
equal-cost links at random; no marks, no losses, no congestion. For a plane and direction carrying PACKETS data
packets this prints how often a link ends more than 25 % and 40 % off an even share, for one plane-direction and for a
run of four (two planes, two directions), as the lab tests judge them. Standard library only; seeded, so repeatable.

    deploy/lab/spread_model.py [--packets 4096 8192 ...] [--trials 3000] [--links 4] [--run 16 32]
"""
import argparse
import random


def worst_deviation(packets, links, run_min, run_max, rng):
    counts = [0] * links
    sent = 0
    while sent < packets:
        run = min(rng.randint(run_min, run_max), packets - sent)
        counts[rng.randrange(links)] += run
        sent += run
    even = packets / links
    return max(abs(c - even) / even for c in counts)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packets", type=int, nargs="+", default=[4096, 6144, 8192, 12288, 16384, 24576])
    parser.add_argument("--trials", type=int, default=3000)
    parser.add_argument("--links", type=int, default=4)
    parser.add_argument("--run", type=int, nargs=2, default=[16, 32], metavar=("MIN", "MAX"))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for packets in args.packets:
        one = [worst_deviation(packets, args.links, args.run[0], args.run[1], rng) for _ in range(args.trials)]
        four = [max(one[i:i + 4]) for i in range(0, len(one) - 3, 4)]
        print("%6d packets per plane-direction: one plane-direction over 25 %% %.3f, over 40 %% %.3f; "
              "a run of four over 25 %% %.3f, over 40 %% %.3f; median worst %.1f %%" % (
                  packets, sum(w > 0.25 for w in one) / len(one), sum(w > 0.40 for w in one) / len(one),
                  sum(w > 0.25 for w in four) / len(four), sum(w > 0.40 for w in four) / len(four),
                  100 * sorted(one)[len(one) // 2]))


if __name__ == "__main__":
    main()
