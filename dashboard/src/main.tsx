/** The dashboard's entry: mounts the app with the API's base path and the tab's session storage. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.js';
import { apiBaseFromPath } from './lib/api-base.js';
import './styles.css';

const root = document.getElementById('root');
if (root === null) throw new Error('The dashboard needs <div id="root"> in index.html.');
createRoot(root).render(
  <StrictMode>
    <App basePath={apiBaseFromPath(window.location.pathname)} storage={window.sessionStorage} />
  </StrictMode>,
);
