package io.spraynic.bench.jmh;

import io.spraynic.datapath.wire.SipHash;
import io.spraynic.datapath.wire.SipHashMainCopy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

/**
 * The build's {@link SipHash} against {@link SipHashMainCopy} (main's at 9bf48e05), alternated round by round in one
 * JVM ({@link CpuTimeRounds}): {@code hash5}, the message tag every data message costs its sender and its receiver
 * (S12.4), over message words that change from call to call as a connection's do (the MSN counts, the address
 * moves); and {@code hash} over 64 bytes in global-scope memory (as DPDK's), the control tag of an ACK (BTH and
 * SACKH up to the tag, S12.3). Both are first checked to give the same tags. The copy's loops run first in each
 * round unless told {@code build-first}.
 * <pre>
 *   java -cp ... io.spraynic.bench.jmh.SipHashCpuTime [rounds [copy-first|build-first]]
 * </pre>
 */
public final class SipHashCpuTime
{
    private static final int CALLS_PER_ROUND = 5_000_000;
    private static final int CONTROL_BYTES = 64;
    private static final int BUFFERS = 32;
    private static final int SLOT = 128;

    private SipHashCpuTime()
    {
    }

    /**
     * @param args rounds (9), which loops run first in each round (copy-first).
     */
    public static void main(final String[] args)
    {
        final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        final boolean buildFirst = args.length > 1 && "build-first".equals(args[1]);
        final SplittableRandom random = new SplittableRandom(70);
        final long k0 = random.nextLong();
        final long k1 = random.nextLong();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment allocated = arena.allocate((long)BUFFERS * SLOT, 64);
            final MemorySegment buffers = MemorySegment.ofAddress(allocated.address()).reinterpret(allocated.byteSize());
            for (long at = 0; at < buffers.byteSize(); at++)
            {
                buffers.set(java.lang.foreign.ValueLayout.JAVA_BYTE, at, (byte)random.nextInt());
            }
            for (int i = 0; i < 1000; i++)
            {
                final long w = random.nextLong();
                final long built = SipHash.hash5(k0, k1, w, ~w, w * 31, w >>> 7, i);
                final long copied = SipHashMainCopy.hash5(k0, k1, w, ~w, w * 31, w >>> 7, i);
                final int at = (i % BUFFERS) * SLOT;
                final int length = i % (SLOT - 8);
                final long builtBytes = SipHash.hash(k0, k1, buffers, at, length);
                final long copiedBytes = SipHashMainCopy.hash(k0, k1, buffers, at, length);
                if (built != copied || builtBytes != copiedBytes)
                {
                    throw new IllegalStateException("call " + i + ": the build and main's copy disagree");
                }
            }
            final CpuTimeRounds timed = new CpuTimeRounds(rounds, CALLS_PER_ROUND);
            final CpuTimeRounds.Loop copy5 = () -> copyMessageTags(k0, k1);
            final CpuTimeRounds.Loop build5 = () -> buildMessageTags(k0, k1);
            final CpuTimeRounds.Loop copyControl = () -> copyControlTags(k0, k1, buffers);
            final CpuTimeRounds.Loop buildControl = () -> buildControlTags(k0, k1, buffers);
            if (buildFirst)
            {
                timed.add(build5).add(copy5).add(buildControl).add(copyControl);
            }
            else
            {
                timed.add(copy5).add(build5).add(copyControl).add(buildControl);
            }
            timed.run();
            final int c5 = buildFirst ? 1 : 0;
            final int b5 = buildFirst ? 0 : 1;
            final int cc = buildFirst ? 3 : 2;
            final int bc = buildFirst ? 2 : 3;
            System.out.printf("%s, ns CPU per tag best / median: hash5 main's copy %.2f / %.2f, build %.2f / %.2f " +
                "(build / copy %.3f best, %.3f median); hash of %d B main's copy %.2f / %.2f, build %.2f / %.2f " +
                "(build / copy %.3f best, %.3f median); %d rounds; sink %d%n",
                buildFirst ? "build first" : "copy first",
                timed.best(c5), timed.median(c5), timed.best(b5), timed.median(b5),
                timed.best(b5) / timed.best(c5), timed.median(b5) / timed.median(c5),
                CONTROL_BYTES, timed.best(cc), timed.median(cc), timed.best(bc), timed.median(bc),
                timed.best(bc) / timed.best(cc), timed.median(bc) / timed.median(cc), rounds, timed.sink() & 1);
        }
    }

    // the words of consecutive messages: the MSN counts, the address moves by the length, the rest stays
    private static long buildMessageTags(final long k0, final long k1)
    {
        long sum = 0;
        for (int msn = 0; msn < CALLS_PER_ROUND; msn++)
        {
            sum += SipHash.hash5(k0, k1, 0x0A01_0000_0000_0000L | msn, 64L << 32 | msn, 0x7F00_0000_0000L + 64L * msn,
                0x1234L << 32 | 7, 0);
        }
        return sum;
    }

    private static long copyMessageTags(final long k0, final long k1)
    {
        long sum = 0;
        for (int msn = 0; msn < CALLS_PER_ROUND; msn++)
        {
            sum += SipHashMainCopy.hash5(k0, k1, 0x0A01_0000_0000_0000L | msn, 64L << 32 | msn,
                0x7F00_0000_0000L + 64L * msn, 0x1234L << 32 | 7, 0);
        }
        return sum;
    }

    private static long buildControlTags(final long k0, final long k1, final MemorySegment buffers)
    {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_ROUND; i++)
        {
            sum += SipHash.hash(k0, k1, buffers, (long)(i & (BUFFERS - 1)) * SLOT, CONTROL_BYTES);
        }
        return sum;
    }

    private static long copyControlTags(final long k0, final long k1, final MemorySegment buffers)
    {
        long sum = 0;
        for (int i = 0; i < CALLS_PER_ROUND; i++)
        {
            sum += SipHashMainCopy.hash(k0, k1, buffers, (long)(i & (BUFFERS - 1)) * SLOT, CONTROL_BYTES);
        }
        return sum;
    }
}
