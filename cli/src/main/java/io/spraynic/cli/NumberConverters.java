package io.spraynic.cli;

import picocli.CommandLine;

/**
 * The converters every option of a number type goes through, registered on the whole command line
 * ({@link SprayNic#execute}): their messages say what the value is not, and a double must be finite
 * ({@code NaN} and {@code Infinity} pass {@link Double#parseDouble} but are no loss rate, duration or fraction).
 * The parameter exception handler turns them into one sentence with the option and a value that works.
 */
final class NumberConverters
{
    private NumberConverters()
    {
    }

    static final class WholeInt implements CommandLine.ITypeConverter<Integer>
    {
        public Integer convert(final String value)
        {
            try
            {
                return Integer.valueOf(value.trim());
            }
            catch (final NumberFormatException ex)
            {
                throw new CommandLine.TypeConversionException(isWhole(value) ?
                    "too large for a whole number here (at most " + Integer.MAX_VALUE + ")" : "not a whole number");
            }
        }
    }

    static final class WholeLong implements CommandLine.ITypeConverter<Long>
    {
        public Long convert(final String value)
        {
            try
            {
                return Long.valueOf(value.trim());
            }
            catch (final NumberFormatException ex)
            {
                throw new CommandLine.TypeConversionException(isWhole(value) ? "too large for a whole number (at most " + Long.MAX_VALUE + ")" :
                    "not a whole number");
            }
        }
    }

    static final class Finite implements CommandLine.ITypeConverter<Double>
    {
        public Double convert(final String value)
        {
            final double number;
            try
            {
                number = Double.parseDouble(value.trim());
            }
            catch (final NumberFormatException ex)
            {
                throw new CommandLine.TypeConversionException("not a number");
            }
            // parseDouble also takes "NaN", "Infinity" and hexadecimal or typed forms ("1d", "0x1p3"): none is meant here
            if (!Double.isFinite(number) || !value.trim().matches("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?"))
            {
                throw new CommandLine.TypeConversionException("not a finite decimal number");
            }
            return number;
        }
    }

    static boolean isWhole(final String value)
    {
        return value.trim().matches("[+-]?\\d+");
    }

    /** Registers the converters on a command line and all its subcommands. */
    static CommandLine register(final CommandLine commandLine)
    {
        commandLine.registerConverter(Integer.class, new WholeInt());
        commandLine.registerConverter(Integer.TYPE, new WholeInt());
        commandLine.registerConverter(Long.class, new WholeLong());
        commandLine.registerConverter(Long.TYPE, new WholeLong());
        commandLine.registerConverter(Double.class, new Finite());
        commandLine.registerConverter(Double.TYPE, new Finite());
        return commandLine;
    }
}
