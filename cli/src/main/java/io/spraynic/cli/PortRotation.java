package io.spraynic.cli;

import picocli.CommandLine;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Spray's source-port rotation as {@code --port-rotation} gives it: a path moves to a new UDP source port after
 * {@code min} to {@code max} packets, or never ({@link #OFF}). Parsed once, when the command line is read, so a bad
 * value is refused before a command starts anything.
 *
 * @param min packets on a port before it may rotate, 1..65536; 0 when off.
 * @param max packets on a port at most, min..65536; 0 when off.
 */
record PortRotation(int min, int max)
{
    static final PortRotation OFF = new PortRotation(0, 0);
    static final int MAX_PACKETS = 65_536;
    static final String ALLOWED = "must be MIN-MAX packets, 1 <= MIN <= MAX <= " + MAX_PACKETS + ", or off";

    // at most 6 digits each: no value can overflow an int before it is range-checked
    private static final Pattern MIN_MAX = Pattern.compile("(\\d{1,6})-(\\d{1,6})");

    /**
     * @param text {@code MIN-MAX} or {@code off}.
     * @return the rotation it names; throws {@link IllegalArgumentException} saying what is allowed otherwise.
     */
    static PortRotation parse(final String text)
    {
        if ("off".equals(text))
        {
            return OFF;
        }
        final Matcher m = MIN_MAX.matcher(text);
        if (!m.matches())
        {
            throw new IllegalArgumentException(ALLOWED);
        }
        final int min = Integer.parseInt(m.group(1));
        final int max = Integer.parseInt(m.group(2));
        if (min < 1 || max < min || max > MAX_PACKETS)
        {
            throw new IllegalArgumentException(ALLOWED);
        }
        return new PortRotation(min, max);
    }

    /** For picocli: the parameter exception handler turns the refusal into one sentence with a value that works. */
    static final class Converter implements CommandLine.ITypeConverter<PortRotation>
    {
        public PortRotation convert(final String value)
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
