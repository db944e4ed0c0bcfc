import { type ChangeEvent, type FormHTMLAttributes, type SubmitEvent, type ReactNode, useRef } from 'react';
import { useAnalytics } from './use-analytics.js';

/** Props of {@link TrackForm}: its own plus those of the `<form>` it renders. */
export interface TrackFormProps extends FormHTMLAttributes<HTMLFormElement> {
  /** Name of the form in the events. */
  formName: string;
  /** Send `form_submit` on submit. @default true */
  trackSubmit?: boolean;
  /** Send `form_field_change` when a field's value changes (its name and kind, never its value). @default false */
  trackFieldChanges?: boolean;
  children?: ReactNode;
}

type Field = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/**
 * A `<form>` that tracks its use: `form_submit` (form, field_count, changed_fields) and
 * `form_field_change` (form, field, field_type, change_count). Field VALUES are never read into
 * an event: only names and interaction.
 */
export function TrackForm({ formName, trackSubmit = true, trackFieldChanges = false, children, onSubmit, onChange, ...rest }: TrackFormProps): ReactNode {
  const analytics = useAnalytics();
  const changes = useRef(new Map<string, number>());

  const handleChange = (event: ChangeEvent<HTMLFormElement>): void => {
    onChange?.(event);
    const field = event.target as unknown as Field;
    const name = field.name || field.id || field.tagName.toLowerCase();
    const count = (changes.current.get(name) ?? 0) + 1;
    changes.current.set(name, count);
    if (trackFieldChanges) {
      analytics.track('form_field_change', { form: formName, field: name, field_type: field.type || field.tagName.toLowerCase(), change_count: count });
    }
  };

  const handleSubmit = (event: SubmitEvent<HTMLFormElement>): void => {
    onSubmit?.(event);
    if (trackSubmit) {
      analytics.track('form_submit', {
        form: formName,
        field_count: event.currentTarget.elements.length,
        changed_fields: changes.current.size,
      });
    }
  };

  return (
    <form {...rest} onSubmit={handleSubmit} onChange={handleChange}>
      {children}
    </form>
  );
}
