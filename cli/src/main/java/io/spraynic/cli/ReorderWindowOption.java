package io.spraynic.cli;

import io.spraynic.datapath.transport.spray.SprayConfig;
import picocli.CommandLine;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Spray's reordering window as {@code --reorder-window} gives it (PROTOCOL.md S6.5-3), in microseconds: {@code off} (a
 * gap is loss, S6.5: the default, right for ECMP fabrics, which keep a route's packets in order), {@code US} (a fixed
 * window, for a fabric whose reordering within a route is known) or {@code MIN-MAX} (a window that starts at MIN and
 * learns up to MAX from the losses it finds spurious, for a fabric whose reordering is not known). Parsed once, when the
 * command line is read, so a bad value is refused before a command starts anything.
 *
 * @param floorMicros the window it holds gaps by at least.
 * @param maxMicros   the most it learns (at most the floor: it does not learn).
 */
record ReorderWindowOption(long floorMicros, long maxMicros)
{
    static final ReorderWindowOption OFF = new ReorderWindowOption(0, 0);
    static final long MAX_MICROS = SprayConfig.MAX_REORDER_WINDOW_NANOS / 1_000;
    static final String ALLOWED = "must be off, US or MIN-MAX microseconds, 0 <= MIN < MAX <= " + MAX_MICROS;

    // at most 7 digits each: no value can overflow before it is range-checked
    private static final Pattern FIXED = Pattern.compile("(\\d{1,7})");
    private static final Pattern MIN_MAX = Pattern.compile("(\\d{1,7})-(\\d{1,7})");

    /**
     * @param text {@code off}, {@code US} or {@code MIN-MAX}.
     * @return the window it names; throws {@link IllegalArgumentException} saying what is allowed otherwise.
     */
    static ReorderWindowOption parse(final String text)
    {
        if ("off".equals(text))
        {
            return OFF;
        }
        final Matcher fixed = FIXED.matcher(text);
        if (fixed.matches())
        {
            final long micros = Long.parseLong(fixed.group(1));
            if (micros > MAX_MICROS)
            {
                throw new IllegalArgumentException(ALLOWED);
            }
            return new ReorderWindowOption(micros, micros);
        }
        final Matcher m = MIN_MAX.matcher(text);
        if (!m.matches())
        {
            throw new IllegalArgumentException(ALLOWED);
        }
        final long min = Long.parseLong(m.group(1));
        final long max = Long.parseLong(m.group(2));
        if (max <= min || max > MAX_MICROS)
        {
            throw new IllegalArgumentException(ALLOWED);
        }
        return new ReorderWindowOption(min, max);
    }

    /** @return {@code config} with this window. */
    SprayConfig applyTo(final SprayConfig config)
    {
        return config.reorderWindowNanos(floorMicros * 1_000).reorderWindowMaxNanos(maxMicros * 1_000);
    }

    /** For picocli: the parameter exception handler turns the refusal into one sentence with a value that works. */
    static final class Converter implements CommandLine.ITypeConverter<ReorderWindowOption>
    {
        public ReorderWindowOption convert(final String value)
        {
            try
            {
                return parse(value);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new CommandLine.TypeConversionException(ex.getMessage());
            }
        }
    }
}
