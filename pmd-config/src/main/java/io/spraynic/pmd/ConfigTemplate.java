package io.spraynic.pmd;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A configuration document with {@code ${name}} and {@code ${name:-default}} placeholders, as the
 * presets are written, filled in from a map of parameters before the TOML is parsed.
 * <p>
 * Substitution is textual, so a parameter can stand for a number ({@code rx_queues = ${queues:-1}}) as
 * well as part of a string ({@code iface = "${iface:-veth0}"}). To keep that safe, values may not contain
 * quotes, backslashes or control characters, which could break out of a TOML string. A parameter that
 * the document does not use is refused, so a misspelt parameter never goes unnoticed; so is a
 * placeholder with no default and no value. There is no escape for a literal {@code ${}.
 */
public final class ConfigTemplate
{
    /**
     * One parameter a template takes.
     *
     * @param name         the parameter name, lower case letters, digits and '_'.
     * @param defaultValue the default, or empty when the parameter is required.
     */
    public record Parameter(String name, Optional<String> defaultValue)
    {
        /**
         * Refuses nulls.
         */
        public Parameter
        {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(defaultValue, "defaultValue");
        }

        /**
         * @return {@code name} or {@code name=default}, for listings.
         */
        @Override
        public String toString()
        {
            return defaultValue.map(value -> name + '=' + value).orElse(name + " (required)");
        }
    }

    /** Anything from "${" to the end of the line or the first "}": checked below, so a typo is never text. */
    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}\\n]*)(})?");
    private static final Pattern BODY = Pattern.compile("([a-z][a-z0-9_]*)(?::-([^}\\n]*))?");
    private static final Pattern UNSAFE_VALUE = Pattern.compile("[\"\\\\\\p{Cntrl}]");

    private final String source;
    private final String text;
    private final Map<String, Parameter> parameters;

    private ConfigTemplate(final String source, final String text, final Map<String, Parameter> parameters)
    {
        this.source = source;
        this.text = text;
        this.parameters = parameters;
    }

    /**
     * @param text   the document.
     * @param source a file path or preset name, for errors.
     * @return the template, its placeholders checked.
     * @throws ConfigException for a malformed placeholder or two different defaults for one parameter.
     */
    public static ConfigTemplate of(final String text, final String source)
    {
        final Map<String, Parameter> parameters = new LinkedHashMap<>();
        final Matcher matcher = PLACEHOLDER.matcher(text);
        while (matcher.find())
        {
            final Matcher body = BODY.matcher(matcher.group(1));
            if (matcher.group(2) == null || !body.matches())
            {
                throw new ConfigException("line " + lineOf(text, matcher.start()), Toml.quote(matcher.group()),
                    "must be a placeholder ${name} or ${name:-default}, the name in lower case letters, " +
                    "digits and '_'").withSource(source);
            }

            final Parameter parameter = new Parameter(body.group(1), Optional.ofNullable(body.group(2)));
            final Parameter previous = parameters.putIfAbsent(parameter.name(), parameter);
            if (previous != null && !previous.equals(parameter))
            {
                throw new ConfigException("line " + lineOf(text, matcher.start()), Toml.quote(matcher.group()),
                    "must give ${" + parameter.name() + "} the same default everywhere; it was first " +
                    previous.defaultValue().map(value -> "\"" + value + "\"").orElse("without one"))
                    .withSource(source);
            }
        }

        return new ConfigTemplate(source, text, Map.copyOf(parameters));
    }

    /**
     * @return where the text came from.
     */
    public String source()
    {
        return source;
    }

    /**
     * @return the text with its placeholders.
     */
    public String text()
    {
        return text;
    }

    /**
     * @return the parameters in order of first use.
     */
    public List<Parameter> parameters()
    {
        final List<Parameter> ordered = new ArrayList<>();
        final Matcher matcher = PLACEHOLDER.matcher(text);
        while (matcher.find())
        {
            final Parameter parameter = parameters.get(nameOf(matcher.group(1)));
            if (!ordered.contains(parameter))
            {
                ordered.add(parameter);
            }
        }

        return List.copyOf(ordered);
    }

    /**
     * @param values parameter values by name; each must be a parameter of this template.
     * @return the text with every placeholder replaced by its value or default.
     * @throws ConfigException for an unknown parameter, a required one without a value, or an unsafe value.
     */
    public String render(final Map<String, String> values)
    {
        for (final Map.Entry<String, String> entry : values.entrySet())
        {
            final String name = entry.getKey();
            if (!parameters.containsKey(name))
            {
                final List<String> names = parameters().stream().map(Parameter::name).toList();
                final String closest = Toml.closest(name, names);
                throw new ConfigException("${" + name + "}", Toml.quote(String.valueOf(entry.getValue())),
                    "is not a parameter of this configuration; " +
                    (names.isEmpty() ? "it takes none" : "parameters: " + String.join(", ", names)),
                    closest == null ? "" : "did you mean " + closest + "?");
            }
            final String value = Objects.requireNonNull(entry.getValue(), name);
            if (UNSAFE_VALUE.matcher(value).find())
            {
                throw new ConfigException("${" + name + "}", Toml.quote(value),
                    "must not contain quotes, backslashes or control characters: it is written into TOML text");
            }
        }

        final Matcher matcher = PLACEHOLDER.matcher(text);
        final StringBuilder sb = new StringBuilder(text.length() + 64);
        while (matcher.find())
        {
            final Parameter parameter = parameters.get(nameOf(matcher.group(1)));
            final String value = values.containsKey(parameter.name()) ?
                values.get(parameter.name()) :
                parameter.defaultValue().orElseThrow(() -> new ConfigException("${" + parameter.name() + "}",
                    ConfigException.MISSING, "is a required parameter: it has no default",
                    "pass " + parameter.name() + "=<value>"));
            matcher.appendReplacement(sb, Matcher.quoteReplacement(value));
        }
        matcher.appendTail(sb);

        return sb.toString();
    }

    /**
     * Renders and parses in one step.
     *
     * @param values parameter values by name.
     * @return the configuration, valid.
     * @throws ConfigException for a bad parameter or a bad value in the rendered document.
     */
    public NicConfig toConfig(final Map<String, String> values)
    {
        final String rendered;
        try
        {
            rendered = render(values);
        }
        catch (final ConfigException ex)
        {
            throw ex.withSource(source);
        }

        return NicConfig.parse(rendered, source);
    }

    private static String nameOf(final String placeholderBody)
    {
        final int colon = placeholderBody.indexOf(':');
        return colon < 0 ? placeholderBody : placeholderBody.substring(0, colon);
    }

    private static int lineOf(final String text, final int offset)
    {
        int line = 1;
        for (int i = 0; i < offset; i++)
        {
            line += text.charAt(i) == '\n' ? 1 : 0;
        }

        return line;
    }
}
