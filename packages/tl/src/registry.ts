import { KbError } from "@kb/errors";
import type { Kernel } from "./runner.js";

/**
 * Kernels by name (ADR-0046 D7). `register` refuses a second kernel under a name; `define` (what a
 * launch does) replaces it, last call wins, so relaunching an edited kernel just works.
 */
export class KernelRegistry {
  private readonly kernels = new Map<string, Kernel>();

  /** Adds `kernel` under `name`; a name already taken is an error. */
  register(name: string, kernel: Kernel): void {
    checkName(name);
    if (this.kernels.has(name)) {
      throw new KbError(
        "KERNEL_FAILED",
        `a kernel named "${name}" is already registered; pick another name, or launch it (a launch replaces the kernel of that name).`,
      );
    }
    this.define(name, kernel);
  }

  /** Sets the kernel of `name`, replacing any earlier one (a launch: last call wins). */
  define(name: string, kernel: Kernel): void {
    checkName(name);
    if (typeof kernel !== "function") {
      throw new KbError(
        "KERNEL_FAILED",
        `kernel "${name}" must be an async function (tl, ...args), got ${typeof kernel}.`,
      );
    }
    this.kernels.set(name, kernel);
  }

  /** The kernel of `name`; an unknown name is an error listing the registered ones. */
  get(name: string): Kernel {
    const kernel = this.kernels.get(name);
    if (kernel === undefined) {
      const names = [...this.kernels.keys()].sort();
      throw new KbError(
        "KERNEL_FAILED",
        `no kernel named "${name}" is registered; registered: ${names.length > 0 ? names.join(", ") : "(none)"}.`,
      );
    }
    return kernel;
  }

  has(name: string): boolean {
    return this.kernels.has(name);
  }

  /** Registered names, sorted. */
  names(): string[] {
    return [...this.kernels.keys()].sort();
  }

  /** Removes every kernel (tests). */
  clear(): void {
    this.kernels.clear();
  }
}

function checkName(name: string): void {
  if (typeof name !== "string" || name.length === 0) {
    throw new KbError(
      "KERNEL_FAILED",
      `a kernel name must be a non-empty string, got ${JSON.stringify(name)}.`,
    );
  }
}
