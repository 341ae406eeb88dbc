import { make } from './dom.ts';

/** A Copy button after each element marked `data-copy="what"`, named "Copy what", that copies its text. */
export function addCopyButtons(): void {
  for (const code of document.querySelectorAll<HTMLElement>('[data-copy]')) {
    const button = make(
      'button',
      { type: 'button', className: 'copy', 'aria-label': `Copy ${code.dataset.copy}` },
      'Copy',
    );
    button.addEventListener('click', async () => {
      await navigator.clipboard.writeText(code.textContent ?? '');
      button.textContent = 'Copied';
    });
    code.after(button);
  }
}
