package io.spraynic.pmd;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ConfigTemplateTest
{
    @Test
    void shouldListParametersInOrderOfFirstUse()
    {
        final ConfigTemplate template = ConfigTemplate.of("a = \"${iface:-veth0}\"\nb = ${queues}\nc = ${iface:-veth0}\n", "t");

        assertEquals(List.of(
            new ConfigTemplate.Parameter("iface", Optional.of("veth0")),
            new ConfigTemplate.Parameter("queues", Optional.empty())), template.parameters());
    }

    @Test
    void shouldReplaceEveryPlaceholderWithItsValueOrDefault()
    {
        final ConfigTemplate template = ConfigTemplate.of("a = \"${iface:-veth0}\"\nb = ${queues}\nc = \"${iface:-veth0}\"\n", "t");

        assertEquals("a = \"veth0\"\nb = 2\nc = \"veth0\"\n", template.render(Map.of("queues", "2")));
        assertEquals("a = \"v1\"\nb = 3\nc = \"v1\"\n", template.render(Map.of("queues", "3", "iface", "v1")));
    }

    @Test
    void shouldAllowAnEmptyDefaultAndValuesThatLookLikeReplacementSyntax()
    {
        final ConfigTemplate template = ConfigTemplate.of("a = \"${suffix:-}x\"\n", "t");

        assertEquals("a = \"x\"\n", template.render(Map.of()));
        assertEquals("a = \"$1${y}x\"\n", template.render(Map.of("suffix", "$1${y}")));
    }

    @Test
    void shouldRefuseAValueThatCouldBreakOutOfATomlString()
    {
        final ConfigTemplate template = ConfigTemplate.of("iface = \"${iface:-veth0}\"\n", "t");

        final ConfigException quote = assertThrows(ConfigException.class,
            () -> template.render(Map.of("iface", "x\"\nno_huge = false\n#")));
        assertEquals("${iface} = \"x\\\"\\nno_huge = false\\n#\": must not contain quotes, backslashes or control " +
            "characters: it is written into TOML text", quote.getMessage());
        assertThrows(ConfigException.class, () -> template.render(Map.of("iface", "a\\b")));
    }

    @Test
    void shouldSayWhenATemplateTakesNoParameters()
    {
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> ConfigTemplate.of("a = 1\n", "plain.toml").toConfig(Map.of("iface", "x")));

        assertEquals("plain.toml: ${iface} = \"x\": is not a parameter of this configuration; it takes none",
            ex.getMessage());
    }

    @Test
    void shouldRefuseAMalformedPlaceholderOnItsLine()
    {
        final ConfigException unterminated = assertThrows(ConfigException.class,
            () -> ConfigTemplate.of("a = 1\nb = \"${iface\"\n", "t.toml"));
        assertEquals("t.toml: line 2 = \"${iface\\\"\": must be a placeholder ${name} or ${name:-default}, the name " +
            "in lower case letters, digits and '_'", unterminated.getMessage());

        final ConfigException badName = assertThrows(ConfigException.class,
            () -> ConfigTemplate.of("b = \"${Iface}\"\n", "t.toml"));
        assertEquals("t.toml: line 1 = \"${Iface}\": must be a placeholder ${name} or ${name:-default}, the name in " +
            "lower case letters, digits and '_'", badName.getMessage());

        final ConfigException badDefault = assertThrows(ConfigException.class,
            () -> ConfigTemplate.of("b = \"${iface:veth0}\"\n", "t.toml"));
        assertEquals("line 1", badDefault.key());
    }

    @Test
    void shouldRefuseTwoDifferentDefaultsForOneParameter()
    {
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> ConfigTemplate.of("a = ${q:-1}\nb = ${q:-2}\n", "t.toml"));

        assertEquals("t.toml: line 2 = \"${q:-2}\": must give ${q} the same default everywhere; it was first \"1\"",
            ex.getMessage());
        assertThrows(ConfigException.class, () -> ConfigTemplate.of("a = ${q}\nb = ${q:-2}\n", "t.toml"));
    }

    @Test
    void shouldKeepEveryPresetFreeOfConflictingOrMalformedPlaceholders()
    {
        for (final String name : PmdConfigs.presetNames())
        {
            final ConfigTemplate template = PmdConfigs.presetTemplate(name);
            assertEquals("preset " + name, template.source());
            assertEquals(template.parameters().size(),
                template.parameters().stream().map(ConfigTemplate.Parameter::name).distinct().count());
        }
    }
}
