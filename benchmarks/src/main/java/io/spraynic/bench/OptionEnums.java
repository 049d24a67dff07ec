package io.spraynic.bench;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The benchmarks' enum-valued options: each constant is spelled on the command line as its name in lower case.
 */
public final class OptionEnums
{
    private OptionEnums()
    {
    }

    /**
     * @return how {@code value} is spelled on the command line and in JSON.
     */
    public static String text(final Enum<?> value)
    {
        return value.name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param values the enum's constants.
     * @param text   what was given, in any case.
     * @param what   what the option is, for the error.
     * @return the constant spelled {@code text}.
     * @throws IllegalArgumentException naming the choices, when none is.
     */
    public static <E extends Enum<E>> E parse(final E[] values, final String text, final String what)
    {
        for (final E value : values)
        {
            if (text(value).equalsIgnoreCase(text))
            {
                return value;
            }
        }
        throw new IllegalArgumentException(what + " '" + text + "' is not one of " +
            Arrays.stream(values).map(OptionEnums::text).collect(Collectors.joining(", ")));
    }
}
