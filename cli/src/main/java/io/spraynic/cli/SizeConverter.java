package io.spraynic.cli;

import picocli.CommandLine;

import java.util.Locale;

/**
 * Reads counts and sizes with an optional k, m or g suffix, in powers of 1024 as {@code dd} does.
 */
final class SizeConverter implements CommandLine.ITypeConverter<Long>
{
    public Long convert(final String value)
    {
        final String text = value.trim().toLowerCase(Locale.ROOT);
        if (text.isEmpty())
        {
            throw new CommandLine.TypeConversionException("empty: a size is a number with an optional k, m or g suffix");
        }
        final char suffix = text.charAt(text.length() - 1);
        final long multiplier = switch (suffix)
        {
            case 'k' -> 1L << 10;
            case 'm' -> 1L << 20;
            case 'g' -> 1L << 30;
            default -> 1;
        };
        final String digits = multiplier == 1 ? text : text.substring(0, text.length() - 1);
        try
        {
            final long number = Long.parseLong(digits);
            if (number < 0)
            {
                throw new CommandLine.TypeConversionException("negative: a size is 0 or more bytes");
            }
            return Math.multiplyExact(number, multiplier);
        }
        catch (final ArithmeticException ex)
        {
            throw new CommandLine.TypeConversionException("too large: a size must be below 8 EiB (8589934591g)");
        }
        catch (final NumberFormatException ex)
        {
            throw new CommandLine.TypeConversionException(NumberConverters.isWhole(digits) ?
                "too large: a size must be below 8 EiB (8589934591g)" :
                "not a size: a size is a number with an optional k, m or g suffix");
        }
    }
}
