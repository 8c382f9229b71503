// The passport page opens with its overview; bindings, evidence, authority, uses, history and
// settings are sections a person opens, and their forms sit behind "Add ..." and "Edit ..."
// toggles (docs/dashboard.md). Tests open them as a person does before using what is inside.
import type { Locator } from "playwright-core";

/** Opens every closed disclosure around `target`, outermost first, by clicking its summary. */
export async function reveal(target: Locator): Promise<void> {
  for (;;) {
    const closed = target.locator("xpath=ancestor::details[not(@open)]").first();
    if ((await closed.count()) === 0) return;
    await closed.locator(":scope > summary").click();
  }
}
