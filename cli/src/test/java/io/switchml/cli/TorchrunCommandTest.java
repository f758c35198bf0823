package io.switchml.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TorchrunCommandTest {
    @Test
    void everythingAfterTheScriptIsTheScriptsOptionsIncluded() {
        CommandLine cl = SwitchMlCommand.commandLine();
        cl.parseArgs("torchrun", "--workers", "3", "train.py", "--epochs", "1", "--workers", "5", "-x", "--help");
        TorchrunCommand torchrun = cl.getSubcommands().get("torchrun").getCommand();
        assertThat(torchrun.workers).isEqualTo(3);
        assertThat(torchrun.script).containsExactly("train.py", "--epochs", "1", "--workers", "5", "-x", "--help");
        assertThat(torchrun.module).isFalse();
    }

    @Test
    void aModuleInPlaceOfTheScript() {
        CommandLine cl = SwitchMlCommand.commandLine();
        cl.parseArgs("torchrun", "-m", "switchml_torch.train", "--epochs", "1");
        TorchrunCommand torchrun = cl.getSubcommands().get("torchrun").getCommand();
        assertThat(torchrun.module).isTrue();
        assertThat(torchrun.script).containsExactly("switchml_torch.train", "--epochs", "1");
    }

    @Test
    void torchTrainsModelsRunTheModelsScriptWithWhatWasGiven() {
        CommandLine cl = SwitchMlCommand.commandLine();
        cl.parseArgs("torch-train", "--model", "resnet18, dlrm", "--steps", "3", "--batch-size", "8", "--backend", "switchml",
                "--hook", "none", "--format", "json");
        TorchTrainCommand train = cl.getSubcommands().get("torch-train").getCommand();
        List<String> args = train.modelArguments();
        assertThat(args.get(0)).endsWith("python/bench/models.py");
        assertThat(args.subList(1, args.size())).containsExactly("--model", "resnet18,dlrm", "--hook", "none",
                "--backend", "switchml", "--steps", "3", "--seed", "1", "--format", "json", "--batch-size", "8");

        cl.parseArgs("torch-train", "--model", "mobilenet_v2", "--lr", "0.05");
        train = cl.getSubcommands().get("torch-train").getCommand();
        // The models' own batch sizes unless --batch-size was given; 10 steps by default.
        assertThat(train.modelArguments()).containsSubsequence("--steps", "10").contains("--lr", "0.05")
                .doesNotContain("--batch-size");
    }

    @Test
    void aComparisonOfBackendsRunsOnModelsAndPlotsAgainstGloo() {
        CommandLine cl = SwitchMlCommand.commandLine();
        cl.parseArgs("torch-train", "--backend", "switchml,gloo");
        TorchTrainCommand mlp = cl.getSubcommands().get("torch-train").getCommand();
        assertThatThrownBy(mlp::call).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("it needs --model");

        cl.parseArgs("torch-train", "--model", "resnet18", "--backend", "switchml", "--plot", "speedup.svg");
        TorchTrainCommand noGloo = cl.getSubcommands().get("torch-train").getCommand();
        assertThatThrownBy(noGloo::call).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--plot draws the speedup over Gloo: add gloo to --backend");

        cl.parseArgs("torch-train", "--model", "resnet18", "--backend", "switchml,tcp");
        TorchTrainCommand unknown = cl.getSubcommands().get("torch-train").getCommand();
        assertThatThrownBy(unknown::call).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--backend must be gloo, switchml or both (switchml,gloo), not switchml,tcp");
    }
}
