/** A signup form in `<TrackForm>`: field names and counts are sent, never what was typed. */
import { type FormEvent, type ReactNode, useState } from 'react';
import { TrackForm } from 'service-analytics/react';

/** The signup form. */
export function SignupFormDemo(): ReactNode {
  const [submitted, setSubmitted] = useState(false);
  const onSubmit = (event: FormEvent<HTMLFormElement>): void => {
    event.preventDefault();
    setSubmitted(true);
  };
  return (
    <section className="card" aria-labelledby="signup-heading">
      <h2 id="signup-heading">Signup form</h2>
      <p className="hint">
        <code>{'<TrackForm formName="signup" trackFieldChanges>'}</code> sends <code>form_field_change</code> (field name and type) and{' '}
        <code>form_submit</code> (field counts). The values you type are never sent, and recordings mask them.
      </p>
      <TrackForm formName="signup" trackFieldChanges onSubmit={onSubmit} className="form">
        <label>
          Name
          <input name="full_name" autoComplete="name" />
        </label>
        <label>
          Email
          <input name="email" type="email" autoComplete="email" />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="new-password" />
        </label>
        <label>
          Plan
          <select name="plan" defaultValue="starter">
            <option value="starter">Starter</option>
            <option value="pro">Pro</option>
            <option value="team">Team</option>
          </select>
        </label>
        <label className="checkbox">
          <input name="terms" type="checkbox" /> I accept the terms
        </label>
        <div className="actions">
          <button type="submit" className="button-primary">
            Create account
          </button>
        </div>
      </TrackForm>
      <p className="status" role="status">
        {submitted && (
          <>
            Sent <code>form_submit</code> with field counts only.
          </>
        )}
      </p>
    </section>
  );
}
